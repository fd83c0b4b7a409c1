import t from 'tap';
import { importAllowance, type QuotaStanding } from '../../../../src/domain/ingest/import-allowance.ts';

// What an import would meet in its caller's quotas, said with the numbers before the start.

const LEVEL_1: QuotaStanding[] = [
  { quota: 'fileUploadsPerDay', used: 0, limit: 5 },
  { quota: 'importJobsPerDay', used: 9, limit: 10 },
  { quota: 'maxFileSizeMB', used: 0, limit: 25 },
  { quota: 'eventsPerImport', used: 0, limit: 50_000 },
  { quota: 'totalEvents', used: 0, limit: 100_000 },
];

const verdict = (allowance: ReturnType<typeof importAllowance>, quota: string) =>
  allowance.verdicts.find((v) => v.quota === quota);

t.test('a file within every limit: what remains after it', async (t) => {
  const allowance = importAllowance(LEVEL_1, {
    sheets: 1,
    upload: true,
    sizeBytes: 390_619,
    rows: [{ total: 1943, complete: true }],
  });
  t.equal(allowance.allowed, true);
  t.equal(verdict(allowance, 'eventsPerImport')?.message, '1,943 rows: within your 50,000 per import');
  t.equal(verdict(allowance, 'totalEvents')?.message, '98,057 of 100,000 events left after it');
  t.equal(verdict(allowance, 'maxFileSizeMB')?.message, '0.4 MB: within your 25 MB per file');
  t.equal(
    verdict(allowance, 'importJobsPerDay')?.message,
    'Import jobs: this takes 1, 0 of 10 left today after it',
  );
});

t.test('more rows than one import may hold: the import would stop, and the way out', async (t) => {
  const allowance = importAllowance(LEVEL_1, {
    sheets: 1,
    upload: true,
    rows: [{ total: 60_000, complete: true }],
  });
  t.equal(allowance.allowed, true, 'the start is not refused: the rows before the limit are stored');
  t.match(verdict(allowance, 'eventsPerImport'), {
    consequence: 'stops',
    message:
      'this file has 60,000 rows; your level allows 50,000 per import, so the import would stop after 50,000 ' +
      'events: split the file or ask an administrator to raise your trust level',
  });
  t.equal(verdict(allowance, 'totalEvents')?.consequence, 'fits');
});

t.test('too few events left, a count cut short, a file too large, jobs used up', async (t) => {
  const standings = LEVEL_1.map((s) =>
    s.quota === 'totalEvents'
      ? { ...s, used: 99_000 }
      : s.quota === 'importJobsPerDay'
        ? { ...s, used: 10 }
        : s,
  );
  const allowance = importAllowance(standings, {
    sheets: 2,
    upload: true,
    sizeBytes: 30 * 1024 * 1024,
    rows: [
      { total: 800, complete: true },
      { total: 1200, complete: false },
    ],
  });
  t.equal(allowance.allowed, false);
  t.match(verdict(allowance, 'totalEvents'), {
    consequence: 'stops',
    needed: 2000,
    message: /^this file has at least 2,000 rows; you have 1,000 of your 100,000 events left/,
  });
  t.match(verdict(allowance, 'eventsPerImport'), { needed: 1200, message: /^at least 1,200 rows: within/ });
  t.match(verdict(allowance, 'maxFileSizeMB'), {
    consequence: 'refused',
    message: /^this file is 30 MB; your level allows 25 MB per file: split the file/,
  });
  t.match(verdict(allowance, 'importJobsPerDay'), {
    consequence: 'refused',
    message:
      'Import jobs: this needs 2, you have 0 of 10 left today: wait until midnight UTC or ask an administrator to raise your trust level',
  });
});

t.test('unlimited quotas say so; a request without a file checks only the daily counts', async (t) => {
  const unlimited = LEVEL_1.map((s) => ({ ...s, limit: null }));
  const allowance = importAllowance(unlimited, {
    sheets: 1,
    upload: true,
    rows: [{ total: 5, complete: true }],
  });
  t.equal(verdict(allowance, 'totalEvents')?.message, '5 rows: no limit on your events at your level');
  const beforeBody = importAllowance(LEVEL_1, { sheets: 1, upload: true });
  t.same(
    beforeBody.verdicts.map((v) => v.quota),
    ['fileUploadsPerDay', 'importJobsPerDay'],
  );
  t.same(importAllowance(LEVEL_1, { sheets: 0, upload: false }).verdicts, [], 'a preview takes nothing');
});

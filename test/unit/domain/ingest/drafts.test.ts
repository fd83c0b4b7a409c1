import t from 'tap';
import type { DomainError } from '../../../../src/domain/errors.ts';
import { assertDraftOpen, mappingProblems, sheetProblems } from '../../../../src/domain/ingest/drafts.ts';
import { parseIngestSettings, readableSlugCandidates } from '../../../../src/domain/ingest/settings.ts';

t.test('a draft is open until it starts or expires', async (t) => {
  const now = new Date('2026-01-01T12:00:00Z');
  const open = { startedAt: null, startedFileId: null, expiresAt: '2026-01-02T00:00:00Z' };
  t.doesNotThrow(() => assertDraftOpen(1, open, now));
  const code = (fn: () => void) => {
    try {
      fn();
    } catch (error) {
      return (error as DomainError).code;
    }
    return null;
  };
  t.equal(
    code(() => assertDraftOpen(1, { ...open, startedAt: '2026-01-01T11:00:00Z', startedFileId: 4 }, now)),
    'IMPORT_ALREADY_STARTED',
  );
  t.equal(
    code(() => assertDraftOpen(1, { ...open, expiresAt: '2026-01-01T12:00:00Z' }, now)),
    'UPLOAD_EXPIRED',
  );
});

t.test('sheet indexes past the last sheet are problems', async (t) => {
  const settings = parseIngestSettings(
    { sheets: [{ sheetIndex: 1, dataset: 'new' }, { sheetIndex: 2 }] },
    undefined,
  );
  t.match(sheetProblems(settings, 2), [{ code: 'SHEET_OUT_OF_RANGE', sheetIndex: 2 }]);
  t.equal(sheetProblems(settings, 3).length, 0);
});

t.test('mapped columns must be in the header, one column or several', async (t) => {
  const header = ['when', 'street', 'city'];
  t.same(mappingProblems({ timestamp: 'when', address: ['street', 'city'] }, header, 0), []);
  t.match(mappingProblems({ timestamp: 'time', address: ['street', 'town'] }, header, 1), [
    { field: 'settings.fieldMapping.timestamp', code: 'MISSING_COLUMN', sheetIndex: 1 },
    { field: 'settings.fieldMapping.address', code: 'MISSING_COLUMN', message: /"town"/ },
  ]);
});

t.test('dataset slugs are readable, numbered when taken', async (t) => {
  t.same(readableSlugCandidates('Erdbeben Über 5.csv', 3), [
    'erdbeben-uber-5-csv',
    'erdbeben-uber-5-csv-2',
    'erdbeben-uber-5-csv-3',
  ]);
  t.same(readableSlugCandidates('***', 2), ['dataset', 'dataset-2']);
});

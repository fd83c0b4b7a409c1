import path from 'node:path';
import t from 'tap';
import { loadAccessPolicy } from '../../../../src/adapters/config/access-policy.ts';
import { projectRoot } from '../../../../src/adapters/config/environment.ts';
import {
  createIngestFile,
  importQuotaAmounts,
} from '../../../../src/application/ingest/create-ingest-file.ts';
import { DEFAULT_JOB_CONFIG } from '../../../../src/domain/ingest/settings.ts';
import type { IngestStore } from '../../../../src/ports/ingest/ingest-store.ts';
import { memoryQuotas } from '../../../fakes/accounts/quotas.ts';
import { fakeQuotas } from '../../../helpers/quotas.ts';

// What recording a file takes from the quotas, and that a file not recorded keeps nothing.

function store(options: { catalog?: boolean; failCreate?: boolean } = {}) {
  return {
    catalogExists: async () => options.catalog ?? true,
    datasetInCatalog: async () => true,
    createDataset: async () => ({ id: 9 }),
    createFile: async () => {
      if (options.failCreate) throw new Error('the database went away');
      return { file: { id: 1 }, jobs: [{ id: 2 }] };
    },
  } as unknown as IngestStore;
}

const queue = { enqueueIngestJob: async () => {} };
const input = (source: 'upload' | 'scheduled', extra: { quotaTaken?: boolean } = {}) => ({
  originalName: 'a.csv',
  storedPath: 'x/a.csv',
  sizeBytes: 10,
  mimeType: 'text/csv',
  format: 'csv' as const,
  source,
  catalogId: 1,
  userId: 7,
  settings: { ...DEFAULT_JOB_CONFIG, targets: {} },
  sheets: [null, 'second'],
  ...extra,
});

t.test('an upload takes one upload and one import job per sheet, at once', async (t) => {
  const quotas = fakeQuotas();
  await createIngestFile({ store: store(), queue, quotas }, input('upload'));
  t.same(quotas.taken, importQuotaAmounts('upload', 2));
  t.same(quotas.taken, [
    { quota: 'importJobsPerDay', amount: 2 },
    { quota: 'fileUploadsPerDay', amount: 1 },
  ]);
  t.same(quotas.given, []);
  t.same(importQuotaAmounts('scheduled', 1), [
    { quota: 'importJobsPerDay', amount: 1 },
    { quota: 'urlFetchesPerDay', amount: 1 },
  ]);
  t.same(importQuotaAmounts('scraper', 1), [{ quota: 'importJobsPerDay', amount: 1 }]);
});

t.test('a file that is not recorded gives back what it took; a refusal takes nothing', async (t) => {
  const failing = fakeQuotas();
  await t.rejects(
    createIngestFile({ store: store({ failCreate: true }), queue, quotas: failing }, input('upload')),
  );
  t.same(failing.given, failing.taken, 'everything taken is given back');

  const missing = fakeQuotas();
  await t.rejects(
    createIngestFile({ store: store({ catalog: false }), queue, quotas: missing }, input('upload')),
    {
      code: 'CATALOG_NOT_FOUND',
    },
  );
  t.same(missing.taken, [], 'a missing catalog is found before any quota is taken');

  const refused = fakeQuotas({ refuse: 'importJobsPerDay' });
  await t.rejects(createIngestFile({ store: store(), queue, quotas: refused }, input('upload')), {
    code: 'QUOTA_EXCEEDED',
    quota: 'importJobsPerDay',
  });
  t.same(refused.taken, []);

  const fetched = fakeQuotas();
  await createIngestFile(
    { store: store(), queue, quotas: fetched },
    input('scheduled', { quotaTaken: true }),
  );
  t.same(fetched.taken, [], 'a scheduled fetch took its quota before fetching');
});

t.test('on the quota arithmetic of config/quotas.yaml: uploads until the daily limit', async (t) => {
  const policy = loadAccessPolicy(path.join(projectRoot, 'config', 'quotas.yaml'));
  const quotas = memoryQuotas(policy, { now: () => new Date('2030-01-01T12:00:00.000Z') });
  const userId = quotas.addUser({ role: 'user', trustLevel: 1 });
  const used = async () => Object.fromEntries((await quotas.status(userId)).map((s) => [s.quota, s.used]));
  const upload = (options: { failCreate?: boolean } = {}) =>
    createIngestFile({ store: store(options), queue, quotas }, { ...input('upload'), userId });

  await t.rejects(upload({ failCreate: true }));
  t.match(await used(), { fileUploadsPerDay: 0, importJobsPerDay: 0 }, 'a file not recorded costs nothing');
  const uploads = policy.quotas.fileUploadsPerDay.limits[1] ?? 0;
  for (let i = 0; i < uploads; i += 1) await upload();
  t.match(
    await used(),
    { fileUploadsPerDay: uploads, importJobsPerDay: 2 * uploads },
    'two sheets: two jobs each',
  );
  await t.rejects(upload(), { code: 'QUOTA_EXCEEDED' });
  t.match(
    await used(),
    { fileUploadsPerDay: uploads, importJobsPerDay: 2 * uploads },
    'the refusal took nothing',
  );
});

import { createHash } from 'node:crypto';
import t from 'tap';
import { scraperCsvImport } from '../../../../src/application/ingest/import-scraper-csv.ts';
import type { NewIngestFile } from '../../../../src/ports/ingest/ingest-job-store.ts';
import type { FileStore } from '../../../../src/ports/ingest/file-store.ts';
import type { IngestStore } from '../../../../src/ports/ingest/ingest-store.ts';
import { fakeQuotas } from '../../../helpers/quotas.ts';

// A scraper's CSV goes through the FileStore and the create-ingest-file use case; a CSV whose file
// is not recorded does not stay in the store.

function files() {
  const written = new Map<string, Buffer>();
  const store: FileStore = {
    async writeNew(origin, extension, content) {
      const storedPath = `${origin}s/${written.size + 1}${extension}`;
      const chunks: Uint8Array[] = [];
      if (Buffer.isBuffer(content)) chunks.push(content);
      else for await (const chunk of content) chunks.push(chunk);
      const bytes = Buffer.concat(chunks);
      written.set(storedPath, bytes);
      return { storedPath, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
    },
    async remove(storedPath) {
      written.delete(storedPath);
    },
  };
  return { store, written };
}

function ingestStore(options: { dataset?: boolean; failCreate?: boolean } = {}) {
  const recorded: NewIngestFile[] = [];
  const store = {
    catalogOfDataset: async (datasetId: number) => (options.dataset === false ? null : datasetId * 10),
    catalogExists: async () => true,
    datasetInCatalog: async () => true,
    createFile: async (file: NewIngestFile) => {
      if (options.failCreate) throw new Error('the database went away');
      recorded.push(file);
      return { file: { id: 11 }, jobs: [{ id: 12 }] };
    },
  } as unknown as IngestStore;
  return { store, recorded };
}

const queue = { enqueueIngestJob: async () => {} };
const csv = Buffer.from('time,title\n2026-01-01T00:00:00Z,a\n');

t.test("a scraper's CSV is stored and recorded as a scraper import into the dataset's catalog", async (t) => {
  const disk = files();
  const db = ingestStore();
  const created = await scraperCsvImport({
    store: db.store,
    queue,
    quotas: fakeQuotas(),
    files: disk.store,
  }).createFromCsv({ csv, originalName: 'run.csv', datasetId: 4, createdBy: 7, duplicateReview: 'internal' });
  t.same(created, { id: 11 });
  t.same([...disk.written.keys()], ['scrapers/1.csv']);
  t.match(db.recorded, [
    {
      storedPath: 'scrapers/1.csv',
      sizeBytes: csv.length,
      source: 'scraper',
      catalogId: 40,
      uploadedBy: 7,
      settings: { duplicateReview: 'internal', targets: { 0: { datasetId: 4 } } },
    },
  ]);
});

t.test('a missing dataset writes nothing; a file not recorded is removed again', async (t) => {
  const none = files();
  await t.rejects(
    scraperCsvImport({
      store: ingestStore({ dataset: false }).store,
      queue,
      quotas: fakeQuotas(),
      files: none.store,
    }).createFromCsv({ csv, originalName: 'run.csv', datasetId: 4, createdBy: 7, duplicateReview: 'all' }),
    { code: 'DATASET_NOT_FOUND' },
  );
  t.equal(none.written.size, 0);

  const failing = files();
  await t.rejects(
    scraperCsvImport({
      store: ingestStore({ failCreate: true }).store,
      queue,
      quotas: fakeQuotas(),
      files: failing.store,
    }).createFromCsv({ csv, originalName: 'run.csv', datasetId: 4, createdBy: 7, duplicateReview: 'all' }),
    /database went away/,
  );
  t.equal(failing.written.size, 0, 'the CSV written for it is gone');
});

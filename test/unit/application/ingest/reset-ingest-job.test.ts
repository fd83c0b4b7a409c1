import t from 'tap';
import { resetIngestJob } from '../../../../src/application/ingest/reset-ingest-job.ts';
import type { Viewer } from '../../../../src/domain/access.ts';
import { NotFoundError, ValidationError } from '../../../../src/domain/errors.ts';
import type { IngestStore } from '../../../../src/ports/ingest/ingest-store.ts';
import { memoryIngestQueue } from '../../../fakes/ingest/ingest-queue.ts';
import { failedJob } from '../../../helpers/ingest-jobs.ts';

// POST reset with the in-memory IngestQueue (which passes the port's suite): the job goes back to the
// stage asked for and is queued to run at once; a stranger, or a stage reset does not allow, changes
// nothing. The store is still a stub that records what was asked of it (no IngestStore fake yet).

const NOW = new Date('2026-02-01T00:00:00.000Z');
const UPLOADER = 42;
const uploader: Viewer = { id: UPLOADER, email: 'u@example.org', role: 'user', trustLevel: 1 };
const stranger: Viewer = { id: 43, email: 's@example.org', role: 'user', trustLevel: 5 };

const job = failedJob();

function setUp() {
  const asked: string[] = [];
  const store = {
    getJob: async (id: number) => (id === job.id ? job : null),
    getFile: async (id: number) =>
      id === job.ingestFileId ? { id, uploadedBy: UPLOADER, catalogId: 5 } : null,
    resetToStage: async (id: number, stage: string) => {
      asked.push(`reset ${id} to ${stage}`);
    },
    refreshFileStatus: async (id: number) => {
      asked.push(`refresh file ${id}`);
      return null;
    },
  } as unknown as IngestStore;
  const queue = memoryIngestQueue({ now: () => NOW });
  // Catalog 5 is someone else's and private: only the uploader (and admins) may see the import.
  const hierarchy = {
    hierarchy: async () => ({
      catalogId: 5,
      catalog: { isPublic: false, createdBy: 99 },
      datasetId: null,
      dataset: null,
    }),
  };
  return { deps: { store, queue, hierarchy }, queue, asked };
}

t.test('the job goes back to the stage asked for and is queued to run at once', async (t) => {
  const { deps, queue, asked } = setUp();
  const result = await resetIngestJob(deps, uploader, 7, 'GEOCODE_BATCH', 'import');
  t.same(result, {
    success: true,
    message: 'job 7 was reset to GEOCODE_BATCH and queued',
    stage: 'GEOCODE_BATCH',
  });
  t.same(asked, ['reset 7 to geocode-batch', 'refresh file 3']);
  t.same(await queue.waiting(), [{ jobId: 7, startAfter: NOW }]);
});

t.test('a stage the spec does not allow is refused, and nothing is reset or queued', async (t) => {
  const { deps, queue, asked } = setUp();
  await t.rejects(resetIngestJob(deps, uploader, 7, 'create-events'), ValidationError);
  t.same(asked, []);
  t.same(await queue.waiting(), []);
});

t.test('a stranger learns nothing, not even whether the stage was valid', async (t) => {
  const { deps, queue, asked } = setUp();
  await t.rejects(resetIngestJob(deps, stranger, 7, 'nonsense'), NotFoundError);
  await t.rejects(resetIngestJob(deps, stranger, 7, 'detect-schema'), NotFoundError);
  t.same(asked, []);
  t.same(await queue.waiting(), []);
});

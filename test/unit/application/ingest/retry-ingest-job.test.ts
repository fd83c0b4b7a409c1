import t from 'tap';
import { retryIngestJob } from '../../../../src/application/ingest/retry-ingest-job.ts';
import type { Viewer } from '../../../../src/domain/access.ts';
import { DEFAULT_RETRY_POLICY } from '../../../../src/domain/ingest/failures.ts';
import { DEFAULT_JOB_CONFIG } from '../../../../src/domain/ingest/settings.ts';
import type { Quotas } from '../../../../src/ports/accounts/quotas.ts';
import { fakeQuotas } from '../../../helpers/quotas.ts';
import type { IngestJob } from '../../../../src/domain/ingest/imports.ts';
import type { IngestStore } from '../../../../src/ports/ingest/ingest-store.ts';

// The retry use case with hand-written fakes: quota, retryability and the recovery stage.

const failedJob = (overrides: Partial<IngestJob> = {}): IngestJob => ({
  id: 7,
  ingestFileId: 3,
  sheetIndex: 0,
  sheetName: null,
  datasetId: 1,
  datasetName: 'd',
  datasetSlug: 'd',
  stage: 'failed',
  config: DEFAULT_JOB_CONFIG,
  errorLog: {
    lastError: 'connect ECONNREFUSED',
    code: 'ECONNREFUSED',
    failedStage: 'create-events',
    classification: { type: 'recoverable', retryable: true, reason: 'network error (ECONNREFUSED)' },
    failedAt: '2026-01-01T00:00:00.000Z',
  },
  reviewReasons: null,
  approvedAt: null,
  retryAttempts: 1,
  lastRetryAt: null,
  nextRetryAt: null,
  failedAt: '2026-01-01T00:00:00.000Z',
  completedAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...overrides,
});

function fakes(job: IngestJob, quota: Quotas) {
  const calls: string[] = [];
  const store = {
    getJob: async (id: number) => (id === job.id ? job : null),
    getFile: async (id: number) =>
      id === job.ingestFileId ? { id, uploadedBy: UPLOADER, catalogId: 5 } : null,
    resetToStage: async (_id: number, stage: string) => {
      calls.push(`reset ${stage}`);
    },
    scheduleRetry: async (_id: number, retry: { attempts: number; restartStage: string }) => {
      calls.push(`schedule ${retry.restartStage} #${retry.attempts}`);
    },
    refreshFileStatus: async () => null,
  } as unknown as IngestStore;
  const queue = {
    enqueueIngestJob: async (id: number, options?: { startAfter?: Date }) => {
      calls.push(`enqueue ${id} at ${options?.startAfter?.toISOString()}`);
    },
  };
  const clock = { now: () => new Date('2026-02-01T00:00:00.000Z') };
  // Catalog 5 belongs to someone else: only the uploader (and admins) may retry here.
  const hierarchy = {
    hierarchy: async () => ({
      catalogId: 5,
      catalog: { isPublic: true, createdBy: 99 },
      datasetId: null,
      dataset: null,
    }),
  };
  return { deps: { store, queue, quotas: quota, clock, retry: DEFAULT_RETRY_POLICY, hierarchy }, calls };
}

const UPLOADER = 42;
const uploader: Viewer = { id: UPLOADER, email: 'u@example.org', role: 'user', trustLevel: 1 };
const stranger: Viewer = { id: 43, email: 's@example.org', role: 'user', trustLevel: 5 };

const allow = fakeQuotas();
const refuse = fakeQuotas({ refuse: 'importJobsPerDay' });

t.test(
  'a retryable failure restarts at its recovery stage after the backoff of the next attempt',
  async (t) => {
    const { deps, calls } = fakes(failedJob(), allow);
    const result = await retryIngestJob(deps, uploader, 7);
    t.same(result, {
      success: true,
      action: 'retry_scheduled',
      message: 'job 7 restarts at geocode-batch (attempt 2)',
      retryScheduled: true,
      nextRetryAt: '2026-02-01T00:01:00.000Z',
    });
    t.same(calls, [
      'reset geocode-batch',
      'schedule geocode-batch #2',
      'enqueue 7 at 2026-02-01T00:01:00.000Z',
    ]);
  },
);

t.test('an exhausted import quota blocks the retry with 403 quota_exceeded', async (t) => {
  const { deps, calls } = fakes(failedJob(), refuse);
  t.same(await retryIngestJob(deps, uploader, 7), {
    success: false,
    action: 'quota_exceeded',
    error: 'daily import quota reached (limit 10); retry after 2026-02-02T00:00:00.000Z',
    statusCode: 403,
  });
  t.same(calls, [], 'nothing was scheduled');
});

t.test('a permanent failure is not retryable (400), before the quota is even asked', async (t) => {
  const job = failedJob({
    errorLog: {
      lastError: 'the file is empty',
      failedStage: 'analyze-duplicates',
      classification: { type: 'permanent', retryable: false, reason: 'the file is empty' },
    },
  });
  const { deps } = fakes(job, refuse);
  t.match(await retryIngestJob(deps, uploader, 7), {
    success: false,
    action: 'not_retryable',
    statusCode: 400,
  });
});

t.test('a failure that needs a user action is refused (400) naming the fix, before any quota', async (t) => {
  const recording = fakeQuotas();
  const drift = failedJob({
    errorLog: {
      lastError: "the file's schema breaks the dataset's current schema",
      code: 'SCHEMA_DRIFT',
      failedStage: 'validate-schema',
      classification: { type: 'user_action_required', retryable: true, reason: 'drift' },
    },
  });
  const { deps, calls } = fakes(drift, recording);
  const result = await retryIngestJob(deps, uploader, 7);
  t.match(result, { success: false, action: 'not_retryable', statusCode: 400, error: /approve/ });
  t.same(recording.taken, [], 'no quota was taken');
  t.same(calls, [], 'nothing was reset or queued');
});

t.test('strangers get the 404 of a missing job, anonymous callers 401; nothing queued', async (t) => {
  const { deps, calls } = fakes(failedJob(), allow);
  const missing = await retryIngestJob(deps, uploader, 8).catch((error: unknown) => error);
  const notTheirs = await retryIngestJob(deps, stranger, 7).catch((error: unknown) => error);
  t.match(missing, { kind: 'not_found', message: 'ingest job 8 does not exist' });
  t.match(notTheirs, { kind: 'not_found', message: 'ingest job 7 does not exist' });
  await t.rejects(retryIngestJob(deps, null, 8), { name: 'UnauthorizedError' }, 'before any lookup');
  t.same(calls, []);
});

t.test('the import-named routes speak UPPER_CASE stage names', async (t) => {
  const { deps } = fakes(failedJob(), allow);
  t.match(await retryIngestJob(deps, uploader, 7, 'import'), {
    message: 'job 7 restarts at GEOCODE_BATCH (attempt 2)',
  });
});

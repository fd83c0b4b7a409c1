import t from 'tap';
import {
  type JobRecordForProgress,
  jobView,
  type StageRecord,
} from '../../../../src/domain/ingest/progress.ts';
import type { TaskStage } from '../../../../src/domain/ingest/stages.ts';

// The progress view tells what each stage is: a failed stage shows failed, a job waiting for review
// shows needs-review waiting, and the counts are the stage's own rows and batches.

const NOW = Date.parse('2026-01-01T12:00:00Z');

function record(
  stage: TaskStage,
  status: StageRecord['status'],
  rows = 12,
  extra: Partial<StageRecord> = {},
) {
  return {
    stage,
    status,
    startedAt: '2026-01-01T11:59:00Z',
    completedAt: status === 'completed' ? '2026-01-01T11:59:30Z' : null,
    rowsTotal: rows,
    rowsProcessed: status === 'completed' ? rows : 0,
    batchesTotal: 0,
    batchesCurrent: 0,
    batchRowsTotal: 0,
    batchRowsProcessed: 0,
    ...extra,
  } satisfies StageRecord;
}

function job(over: Partial<JobRecordForProgress>): JobRecordForProgress {
  return {
    id: 1,
    datasetId: 2,
    datasetName: 'd',
    stage: 'create-events',
    failedStage: null,
    stages: [],
    errors: 0,
    duplicates: { internal: 0, external: 0 },
    schemaValidation: null,
    results: null,
    geocoding: null,
    rowsTotal: 12,
    ...over,
  };
}

const stageOf = (view: ReturnType<typeof jobView>, name: TaskStage) => {
  const found = view.stages.find((stage) => stage.name === name);
  if (!found) throw new Error(`no stage ${name}`);
  return found;
};

t.test('the stage a job failed at shows failed, not in progress; the stages after it pending', async (t) => {
  const view = jobView(
    job({
      stage: 'failed',
      failedStage: 'create-events',
      stages: [
        record('analyze-duplicates', 'completed'),
        record('create-events', 'in_progress', 12, { rowsProcessed: 5 }),
      ],
    }),
    NOW,
  );
  const failed = stageOf(view, 'create-events');
  t.equal(failed.state, 'failed');
  t.equal(failed.status, 'in_progress', 'the spec has no failed status: its field keeps a spec value');
  t.same(failed.rows, { processed: 5, total: 12 });
  t.equal(failed.performance.rowsPerSecond, null, 'a stopped stage has no speed');
  t.equal(view.estimatedCompletionTime, null);
  t.equal(stageOf(view, 'analyze-duplicates').state, 'completed');
  t.equal(stageOf(view, 'geocode-batch').state, 'pending');
});

t.test('a failed stage named by the error log shows failed even when its record never started', async (t) => {
  const view = jobView(
    job({
      stage: 'failed',
      failedStage: 'detect-schema',
      stages: [record('analyze-duplicates', 'completed')],
    }),
    NOW,
  );
  t.equal(stageOf(view, 'detect-schema').state, 'failed');
  t.equal(stageOf(view, 'analyze-duplicates').state, 'completed', 'a finished stage stays completed');
});

t.test('a job waiting for review shows needs-review waiting, not completed', async (t) => {
  const view = jobView(
    job({
      stage: 'needs-review',
      stages: [record('validate-schema', 'completed'), record('needs-review', 'completed')],
    }),
    NOW,
  );
  const review = stageOf(view, 'needs-review');
  t.equal(review.state, 'waiting');
  t.equal(review.status, 'in_progress', 'not completed: nobody has reviewed it');
  t.equal(review.progress, 0);
  const approved = jobView(
    job({ stage: 'create-events', stages: [record('needs-review', 'completed')] }),
    NOW,
  );
  t.equal(stageOf(approved, 'needs-review').state, 'completed', 'once approved, the review is done');
});

t.test('batch and row counts are those of the file, never the configured batch size', async (t) => {
  // A record written before the fix: a 12-row file's one batch stored as 20,000 of 20,000 rows.
  const view = jobView(
    job({
      stage: 'completed',
      stages: [
        record('create-events', 'completed', 12, {
          batchesTotal: 1,
          batchesCurrent: 1,
          batchRowsTotal: 20_000,
          batchRowsProcessed: 20_000,
        }),
      ],
    }),
    NOW,
  );
  const created = stageOf(view, 'create-events');
  t.same(created.currentBatch, { rowsProcessed: 12, rowsTotal: 12, percentage: 100 });
  t.same(created.rows, { processed: 12, total: 12 });
  t.same(created.batches, { current: 1, total: 1 });
});

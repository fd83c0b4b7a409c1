import {
  IMPORT_PROGRESS_STAGE,
  STAGE_DISPLAY_NAMES,
  STAGE_WEIGHTS,
  type Stage,
  type StageStatus,
  TASK_STAGES,
  type TaskStage,
} from './stages.ts';

// The progress view (spec: GET /api/ingest/{ingestId}/progress) computed from stored stage records.

export type StageRecord = {
  stage: TaskStage;
  status: StageStatus;
  startedAt: string | null;
  completedAt: string | null;
  rowsTotal: number;
  rowsProcessed: number;
  batchesTotal: number;
  batchesCurrent: number;
  /** Rows of the batch in flight. */
  batchRowsTotal: number;
  batchRowsProcessed: number;
};

export type JobRecordForProgress = {
  id: number;
  datasetId: number | null;
  datasetName: string | null;
  stage: Stage;
  /** The stage a failed job stopped at (its errorLog's failedStage), null while it has not failed. */
  failedStage: Stage | null;
  stages: StageRecord[];
  errors: number;
  duplicates: { internal: number; external: number };
  schemaValidation: Record<string, unknown> | null;
  results: Record<string, unknown> | null;
  geocoding: { total: number; done: number } | null;
  rowsTotal: number;
};

/**
 * What a stage is, told truthfully: the spec's four statuses, and `failed` (the stage a failed job
 * stopped at) and `waiting` (needs-review while the job waits for a person), which the spec's
 * `status` has no value for.
 */
type StageState = StageStatus | 'failed' | 'waiting';

type StageView = {
  name: TaskStage;
  displayName: string;
  status: StageStatus;
  state: StageState;
  progress: number;
  weight: number;
  startedAt: string | null;
  completedAt: string | null;
  batches: { current: number; total: number };
  currentBatch: { rowsProcessed: number; rowsTotal: number; percentage: number };
  /** The stage's own rows (file rows; addresses for geocode-batch; sampled rows for detect-schema). */
  rows: { processed: number; total: number };
  performance: { rowsPerSecond: number | null; estimatedSecondsRemaining: number | null };
};

type JobView = {
  id: number;
  datasetId: number | null;
  datasetName?: string;
  currentStage: string;
  overallProgress: number;
  estimatedCompletionTime: string | null;
  stages: StageView[];
  errors: number;
  duplicates: { internal: number; external: number };
  schemaValidation?: Record<string, unknown>;
  results?: Record<string, unknown>;
};

const percent = (done: number, total: number) =>
  total <= 0 ? 0 : Math.min(100, Math.round((done / total) * 1000) / 10);

/**
 * The state a stored record stands for in its job: the stage a failed job stopped at is `failed`
 * (its record stays in_progress: nothing finished it), and needs-review is `waiting` while the job
 * waits there (its record is completed once the reasons are stored; the review is not done).
 */
function stageState(
  record: Pick<StageRecord, 'stage' | 'status'>,
  job: Pick<JobRecordForProgress, 'stage' | 'failedStage'>,
): StageState {
  if (job.stage === 'needs-review' && record.stage === 'needs-review') return 'waiting';
  if (job.stage === 'failed' && record.status === 'in_progress') return 'failed';
  if (job.stage === 'failed' && job.failedStage === record.stage && record.status !== 'completed')
    return 'failed';
  return record.status;
}

/** The spec's status for a state: a stage that waits has not completed; a failed one did not finish. */
const SPEC_STATUS: Record<StageState, StageStatus> = {
  pending: 'pending',
  in_progress: 'in_progress',
  completed: 'completed',
  skipped: 'skipped',
  failed: 'in_progress',
  waiting: 'in_progress',
};

function stageView(record: StageRecord, state: StageState, nowMs: number): StageView {
  const progress =
    state === 'completed' || state === 'skipped'
      ? 100
      : state === 'pending' || state === 'waiting'
        ? 0
        : percent(record.rowsProcessed, record.rowsTotal);
  let rowsPerSecond: number | null = null;
  let remaining: number | null = null;
  // A stage that stopped (failed, waiting) has no speed: measured up to now it would only fall.
  const moving = state === 'in_progress' || state === 'completed';
  if (moving && record.startedAt && record.rowsProcessed > 0) {
    const end = record.completedAt ? Date.parse(record.completedAt) : nowMs;
    const seconds = Math.max(0.001, (end - Date.parse(record.startedAt)) / 1000);
    rowsPerSecond = Math.round(record.rowsProcessed / seconds);
    if (state === 'in_progress' && rowsPerSecond > 0) {
      remaining = Math.max(0, Math.round((record.rowsTotal - record.rowsProcessed) / rowsPerSecond));
    } else if (state === 'completed') remaining = 0;
  }
  // Older records stored the configured batch size as the batch's rows: never more than the stage's.
  const batchRowsTotal = Math.min(record.batchRowsTotal, record.rowsTotal);
  const batchRowsProcessed = Math.min(record.batchRowsProcessed, batchRowsTotal);
  return {
    name: record.stage,
    displayName: STAGE_DISPLAY_NAMES[record.stage],
    status: SPEC_STATUS[state],
    state,
    progress,
    weight: STAGE_WEIGHTS[record.stage],
    startedAt: record.startedAt,
    completedAt: record.completedAt,
    batches: { current: Math.min(record.batchesCurrent, record.batchesTotal), total: record.batchesTotal },
    currentBatch: {
      rowsProcessed: batchRowsProcessed,
      rowsTotal: batchRowsTotal,
      percentage: percent(batchRowsProcessed, batchRowsTotal),
    },
    rows: { processed: Math.min(record.rowsProcessed, record.rowsTotal), total: record.rowsTotal },
    performance: { rowsPerSecond, estimatedSecondsRemaining: remaining },
  };
}

/** Weighted over the stages that run; skipped stages drop out of the denominator. */
function overallProgress(stages: StageView[], terminal: boolean): number {
  if (terminal) return 100;
  const counted = stages.filter((stage) => stage.status !== 'skipped');
  const weight = counted.reduce((sum, stage) => sum + stage.weight, 0);
  if (weight === 0) return 0;
  const done = counted.reduce((sum, stage) => sum + (stage.weight * stage.progress) / 100, 0);
  return Math.round((done / weight) * 1000) / 10;
}

export function jobView(job: JobRecordForProgress, nowMs: number): JobView {
  const byStage = new Map(job.stages.map((record) => [record.stage, record]));
  const stages = TASK_STAGES.map((stage) => {
    const record: StageRecord = byStage.get(stage) ?? {
      stage,
      status: 'pending',
      startedAt: null,
      completedAt: null,
      rowsTotal: 0,
      rowsProcessed: 0,
      batchesTotal: 0,
      batchesCurrent: 0,
      batchRowsTotal: 0,
      batchRowsProcessed: 0,
    };
    return stageView(record, stageState(record, job), nowMs);
  });
  const terminal = job.stage === 'completed';
  const remaining = stages
    .filter((stage) => stage.state === 'in_progress')
    .map((stage) => stage.performance.estimatedSecondsRemaining);
  const estimate =
    job.stage === 'completed' ||
    job.stage === 'failed' ||
    remaining.length === 0 ||
    remaining.some((r) => r === null)
      ? null
      : new Date(nowMs + 1000 * remaining.reduce<number>((sum, r) => sum + (r ?? 0), 0)).toISOString();
  return {
    id: job.id,
    datasetId: job.datasetId,
    ...(job.datasetName ? { datasetName: job.datasetName } : {}),
    currentStage: job.stage,
    overallProgress: overallProgress(stages, terminal),
    estimatedCompletionTime: estimate,
    stages,
    errors: job.errors,
    duplicates: job.duplicates,
    ...(job.schemaValidation ? { schemaValidation: job.schemaValidation } : {}),
    ...(job.results ? { results: job.results } : {}),
  };
}

/** The earlier variant's flat job object (`/api/import/{id}/progress`). */
export function importJobView(job: JobRecordForProgress, nowMs: number) {
  const view = jobView(job, nowMs);
  const current = view.stages.find((stage) => stage.name === job.stage);
  return {
    id: job.id,
    datasetId: job.datasetId,
    stage: IMPORT_PROGRESS_STAGE[job.stage],
    progress: view.overallProgress,
    rowsTotal: job.rowsTotal,
    rowsProcessed: byStageRows(job, 'create-events'),
    batchNumber: current?.batches.current ?? 0,
    errors: job.errors,
    duplicates: job.duplicates,
    ...(job.schemaValidation ? { schemaValidation: job.schemaValidation } : {}),
    ...(job.geocoding
      ? { geocodingProgress: { current: job.geocoding.done, total: job.geocoding.total } }
      : {}),
    ...(job.results ? { results: job.results } : {}),
  };
}

function byStageRows(job: JobRecordForProgress, stage: TaskStage): number {
  return job.stages.find((record) => record.stage === stage)?.rowsProcessed ?? 0;
}

/** An ingest file's overall progress: the mean of its jobs (each sheet counts the same). */
export function fileProgress(jobs: JobView[]): {
  overallProgress: number;
  estimatedCompletionTime: string | null;
} {
  if (jobs.length === 0) return { overallProgress: 0, estimatedCompletionTime: null };
  const overall =
    Math.round((jobs.reduce((sum, job) => sum + job.overallProgress, 0) / jobs.length) * 10) / 10;
  const estimates = jobs.map((job) => job.estimatedCompletionTime).filter((e): e is string => e !== null);
  // ISO 8601 strings in UTC sort by time.
  const latest = estimates.sort().at(-1) ?? null;
  return { overallProgress: overall, estimatedCompletionTime: latest };
}

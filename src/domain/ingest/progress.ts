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
  stages: StageRecord[];
  errors: number;
  duplicates: { internal: number; external: number };
  schemaValidation: Record<string, unknown> | null;
  results: Record<string, unknown> | null;
  geocoding: { total: number; done: number } | null;
  rowsTotal: number;
};

type StageView = {
  name: TaskStage;
  displayName: string;
  status: StageStatus;
  progress: number;
  weight: number;
  startedAt: string | null;
  completedAt: string | null;
  batches: { current: number; total: number };
  currentBatch: { rowsProcessed: number; rowsTotal: number; percentage: number };
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

function stageView(record: StageRecord, nowMs: number): StageView {
  const progress =
    record.status === 'completed' || record.status === 'skipped'
      ? 100
      : record.status === 'pending'
        ? 0
        : percent(record.rowsProcessed, record.rowsTotal);
  let rowsPerSecond: number | null = null;
  let remaining: number | null = null;
  if (record.startedAt && record.rowsProcessed > 0) {
    const end = record.completedAt ? Date.parse(record.completedAt) : nowMs;
    const seconds = Math.max(0.001, (end - Date.parse(record.startedAt)) / 1000);
    rowsPerSecond = Math.round(record.rowsProcessed / seconds);
    if (record.status === 'in_progress' && rowsPerSecond > 0) {
      remaining = Math.max(0, Math.round((record.rowsTotal - record.rowsProcessed) / rowsPerSecond));
    } else if (record.status === 'completed') remaining = 0;
  }
  return {
    name: record.stage,
    displayName: STAGE_DISPLAY_NAMES[record.stage],
    status: record.status,
    progress,
    weight: STAGE_WEIGHTS[record.stage],
    startedAt: record.startedAt,
    completedAt: record.completedAt,
    batches: { current: record.batchesCurrent, total: record.batchesTotal },
    currentBatch: {
      rowsProcessed: record.batchRowsProcessed,
      rowsTotal: record.batchRowsTotal,
      percentage: percent(record.batchRowsProcessed, record.batchRowsTotal),
    },
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
  const stages = TASK_STAGES.map((stage) =>
    stageView(
      byStage.get(stage) ?? {
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
      },
      nowMs,
    ),
  );
  const terminal = job.stage === 'completed';
  const remaining = stages
    .filter((stage) => stage.status === 'in_progress')
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

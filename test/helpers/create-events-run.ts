import { analyzeDuplicates } from '../../src/application/ingest/stages/analyze-duplicates.ts';
import { createEventsDeferringCounts } from '../../src/application/ingest/stages/create-events.ts';
import { detectSchemaStage } from '../../src/application/ingest/stages/detect-schema.ts';
import type { StageContext } from '../../src/application/ingest/stages/stage-context.ts';
import type { IngestFile, IngestJob } from '../../src/domain/ingest/imports.ts';
import { DEFAULT_JOB_CONFIG } from '../../src/domain/ingest/settings.ts';
import type { TaskStage } from '../../src/domain/ingest/stages.ts';
import type { StoredStage } from '../../src/ports/ingest/ingest-job-store.ts';
import type { SourceFiles } from '../../src/ports/ingest/source-files.ts';

// analyze-duplicates, detect-schema and create-events on one file of a SourceFiles, with a store that
// hands each batch to `onBatch` and keeps nothing: how create-events cuts a file into batches (its
// test) and what that costs in memory (bench/ingest/large-cells.ts), without a database.

export type BatchSeen = { events: Array<{ data: unknown }>; rowsBefore: number; rowsProcessed: number };

export async function runCreateEvents(
  files: SourceFiles,
  storedPath: string,
  options: { batchSize: number; batchBytes?: number },
  onBatch: (batch: BatchSeen) => void,
  /** Called after the two stages before create-events. */
  beforeCreate: () => void = () => {},
) {
  let created = 0;
  const store = {
    datasetHasEvents: async () => false,
    countExisting: async () => 0,
    reportProgress: async () => {},
    latestSchema: async () => null,
    createDataset: async () => ({ id: 3, title: '' }),
    datasetInCatalog: async () => true,
    catalogOfDataset: async () => 1,
    removeEmptyDataset: async () => false,
    catalogExists: async () => true,
    deferDatasetCounts: async () => false,
    datasetCountsPending: async () => false,
    refreshDatasetCounts: async () => false,
    datasetsAwaitingCounts: async () => [],
    jobGeocodes: async () => new Map(),
    saveJobGeocodes: async () => {},
    async commitEventBatch(
      _job: number,
      _dataset: number,
      events: Array<{ data: unknown }>,
      _handling: unknown,
      progress: { rowsBefore: number; rowsProcessed: number },
    ) {
      onBatch({ events, rowsBefore: progress.rowsBefore, rowsProcessed: progress.rowsProcessed });
      // The stage's counters after the batch, as the adapter answers them.
      created += events.length;
      return { inserted: events.length, updated: 0, counters: { created } };
    },
  };
  const ctx: StageContext = {
    job: { id: 5, sheetIndex: 0, datasetId: 3, config: DEFAULT_JOB_CONFIG, approvedAt: null } as IngestJob,
    file: { id: 4, storedPath, format: 'csv', source: 'upload', uploadedBy: null } as IngestFile,
    records: new Map(),
  };
  const completed = (stage: TaskStage, output: unknown) =>
    ctx.records.set(stage, { stage, status: 'completed', counters: {}, output } as unknown as StoredStage);
  completed('analyze-duplicates', (await analyzeDuplicates({ files, store }, ctx)).output);
  completed('detect-schema', (await detectSchemaStage({ files, store }, ctx)).output);
  beforeCreate();
  const deps = {
    files,
    store,
    batchSize: options.batchSize,
    ...(options.batchBytes === undefined ? {} : { batchBytes: options.batchBytes }),
    deferCountsMinRows: Number.MAX_SAFE_INTEGER,
    deferredWriters: 1,
    countsRefresh: { enqueueCountsRefresh: async () => {} },
    quotas: { limits: async () => ({}) as never },
  };
  return createEventsDeferringCounts(
    deps as unknown as Parameters<typeof createEventsDeferringCounts>[0],
    ctx,
    { stage: 'create-events', status: 'running', counters: {}, rowsProcessed: 0 } as unknown as StoredStage,
  );
}

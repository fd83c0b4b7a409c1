import type { Location, NewEvent } from '../../domain/events.ts';
import {
  canRetry,
  classifyFailure,
  type FailureFacts,
  IngestFailure,
  needsUser,
  permanent,
  type RetryPolicy,
  retryDelayMs,
} from '../../domain/ingest/failures.ts';
import { geocodingReviewReason, reviewReasons } from '../../domain/ingest/review.ts';
import {
  addressToGeocode,
  type ColumnPositions,
  columnPositions,
  type RowProblem,
  rowToEvent,
  uniqueIdFor,
} from '../../domain/ingest/rows.ts';
import {
  compareSchemas,
  type DetectedSchema,
  describeDrift,
  detectSchema,
  type SchemaDrift,
} from '../../domain/ingest/schema.ts';
import { TASK_STAGES, type TaskStage } from '../../domain/ingest/stages.ts';
import type {
  Clock,
  CountsRefreshQueue,
  Geocoder,
  IngestQueue,
  SourceFiles,
} from '../../ports/ingest-ports.ts';
import {
  dataRows,
  discardCreatedDataset,
  idColumnIndex,
  readHeaderAndSample,
  type RowScan,
  type RowTally,
  rowScan,
  SAMPLE_ROWS,
} from './job-rows.ts';
import type {
  GeocodeOutcome,
  IngestFile,
  IngestJob,
  IngestStore,
  JobErrorLog,
  StoredStage,
} from '../../ports/ingest-store.ts';
import type { Quotas } from '../../ports/quotas.ts';
import { eventQuotaOf, storeWithinQuota } from './event-quota.ts';

// The staged ingestion workflow for one job (one dataset or sheet). Each stage is a task whose output
// is stored: a restarted run returns the stored output of completed tasks instead of running them
// again, and starts the first unfinished task from its beginning (event creation continues after the
// last batch it committed, because each batch commits with its progress).

export type IngestDeps = {
  store: IngestStore;
  files: SourceFiles;
  geocoder: Geocoder | null;
  queue: IngestQueue;
  clock: Clock;
  retry: RetryPolicy;
  batchSize: number;
  /** Imports of at least this many rows into an empty dataset defer its read-API counts. */
  deferCountsMinRows: number;
  /** Batches stored at once (each on its own connection) by an import whose counts are deferred. */
  deferredWriters: number;
  countsRefresh: CountsRefreshQueue;
  /** The importer's totalEvents and eventsPerImport, counted as create-events stores its batches. */
  quotas: Pick<Quotas, 'limits'>;
};

const PROGRESS_EVERY = 10_000;
const GEOCODE_BATCH = 200;

type AnalyzeOutput = {
  rowsTotal: number;
  columns: number;
  idColumn: string | null;
  internal: number;
  external: number;
  /** validate-schema's row checks, made in the same pass with the schema of the first rows. */
  validation?: RowTally;
};
type ValidateOutput = {
  validRows: number;
  /** Valid rows without coordinates of their own but with an address: geocode-batch's work. */
  addressRows?: number;
  invalidRows: number;
  rowErrors: { row: number; field: string; message: string }[];
  drift: SchemaDrift | null;
};
type GeocodeOutput = { addresses: number; found: number; failed: number };

type Context = {
  job: IngestJob;
  file: IngestFile;
  records: Map<TaskStage, StoredStage>;
  /** Distinct addresses to geocode, when a pass in this run collected them (not stored). */
  addresses?: Set<string>;
  /** create-events: batches stored at once (more than one only while the dataset's counts are deferred). */
  writers?: number;
};

/** The result a stage task returns: its output, or a request for a human decision. */
type TaskResult = { output: unknown; skipped?: boolean } | { needsReview: string[]; output: unknown };

export type RunOutcome = 'completed' | 'needs-review' | 'retry-scheduled' | 'failed' | 'nothing-to-do';

export async function runIngestJob(deps: IngestDeps, jobId: number): Promise<RunOutcome> {
  const job = await deps.store.getJob(jobId);
  if (!job || job.stage === 'completed' || job.stage === 'failed' || job.stage === 'needs-review') {
    return 'nothing-to-do';
  }
  const file = await deps.store.getFile(job.ingestFileId);
  if (!file) return 'nothing-to-do';
  const records = new Map((await deps.store.stages(jobId)).map((record) => [record.stage, record]));
  const context: Context = { job, file, records };
  let current: TaskStage = 'analyze-duplicates';
  try {
    for (const stage of TASK_STAGES) {
      current = stage;
      const record = records.get(stage);
      if (record && (record.status === 'completed' || record.status === 'skipped')) continue;
      const started = await deps.store.startStage(jobId, stage);
      records.set(stage, started);
      const task = stage === 'create-events' ? createEventsDeferringCounts : TASKS[stage];
      const result = await task(deps, context, started);
      if ('needsReview' in result) {
        await deps.store.completeStage(jobId, stage, 'completed', result.output);
        await deps.store.markNeedsReview(jobId, result.needsReview);
        await deps.store.refreshFileStatus(file.id);
        return 'needs-review';
      }
      await deps.store.completeStage(jobId, stage, result.skipped ? 'skipped' : 'completed', result.output);
      records.set(stage, {
        ...started,
        status: result.skipped ? 'skipped' : 'completed',
        output: result.output,
      });
    }
    await deps.store.markCompleted(jobId, completionWarnings(context));
    await deps.store.refreshFileStatus(file.id);
    return 'completed';
  } catch (error) {
    const outcome = await handleFailure(deps, job, current, error);
    if (outcome === 'failed' && !classifyFailure(failureFacts(error)).retryable)
      await discardCreatedDataset(deps, job, file);
    await deps.store.refreshFileStatus(file.id);
    return outcome;
  }
}

/** What the classification needs to know, lifted from whatever was thrown. */
export function failureFacts(error: unknown): FailureFacts {
  if (error instanceof IngestFailure)
    return { message: error.message, code: error.code, declared: error.classification };
  const err = error as { message?: unknown; code?: unknown; status?: unknown; cause?: { code?: unknown } };
  const code =
    typeof err?.code === 'string'
      ? err.code
      : typeof err?.cause?.code === 'string'
        ? err.cause.code
        : undefined;
  return {
    message: typeof err?.message === 'string' ? err.message : String(error),
    code,
    httpStatus: typeof err?.status === 'number' ? err.status : undefined,
  };
}

async function handleFailure(
  deps: IngestDeps,
  job: IngestJob,
  stage: TaskStage,
  error: unknown,
): Promise<RunOutcome> {
  const facts = failureFacts(error);
  const classification = classifyFailure(facts);
  const now = deps.clock.now();
  const errorLog: JobErrorLog = {
    lastError: facts.message,
    ...(facts.code ? { code: facts.code } : {}),
    failedStage: stage,
    classification,
    failedAt: now.toISOString(),
  };
  if (classification.type === 'recoverable' && canRetry(deps.retry, job.retryAttempts)) {
    const attempt = job.retryAttempts + 1;
    const nextRetryAt = new Date(now.getTime() + retryDelayMs(deps.retry, attempt));
    // The failed task restarts from its beginning; completed tasks keep their stored output.
    await deps.store.scheduleRetry(job.id, {
      attempts: attempt,
      nextRetryAt: nextRetryAt.toISOString(),
      restartStage: stage,
      errorLog: {
        ...errorLog,
        recoveryAttempt: {
          attempt,
          previousError: facts.message,
          recoveryStage: stage,
          classification: classification.type,
        },
      },
    });
    await deps.queue.enqueueIngestJob(job.id, { startAfter: nextRetryAt });
    return 'retry-scheduled';
  }
  await deps.store.markFailed(job.id, errorLog);
  return 'failed';
}

function outputOf<T>(context: Context, stage: TaskStage): T {
  const record = context.records.get(stage);
  if (!record || record.output === null || record.output === undefined) {
    throw new Error(`stage ${stage} has no stored output`);
  }
  return record.output as T;
}

const TASKS: Record<
  TaskStage,
  (deps: IngestDeps, context: Context, record: StoredStage) => Promise<TaskResult>
> = {
  async 'analyze-duplicates'(deps, context) {
    const { job } = context;
    const datasetId = requireDataset(job);
    const checkExternal = await deps.store.datasetHasEvents(datasetId);
    const seen = new Set<string>();
    let internal = 0;
    let external = 0;
    let rowsTotal = 0;
    let header: string[] = [];
    let pending: string[] = [];
    // The first SAMPLE_ROWS rows are held back until the schema is detected from them (the same rows
    // detect-schema reads), so that this one pass also checks every row for validate-schema and
    // collects the addresses for geocode-batch.
    let sample: { values: string[]; row: number; problem: RowProblem | null }[] | null = [];
    let sampled = 0;
    let scan: RowScan | null = null;
    const flushExternal = async () => {
      if (checkExternal && pending.length) external += await deps.store.countExisting(datasetId, pending);
      pending = [];
    };
    const visit = async (values: string[], row: number, problem: RowProblem | null) => {
      const key = problem ? null : uniqueIdFor(values, (scan as RowScan).idIndex, job.config.idStrategy);
      if (key?.ok) {
        if (seen.has(key.id)) internal += 1;
        else {
          seen.add(key.id);
          pending.push(key.id);
          if (pending.length >= 5000) await flushExternal();
        }
      }
      (scan as RowScan).check(values, row, problem);
      if (row % PROGRESS_EVERY === 0) {
        await deps.store.reportProgress(job.id, 'analyze-duplicates', { rowsTotal: row, rowsProcessed: row });
      }
    };
    const startScan = async () => {
      const held = sample ?? [];
      sample = null;
      scan = rowScan(
        header,
        detectSchema(
          header,
          held.filter((r) => !r.problem).map((r) => r.values),
          job.config.fieldMapping,
        ),
        context,
      );
      for (const r of held) await visit(r.values, r.row, r.problem);
    };
    for await (const { header: h, values, row, problem } of dataRows(deps, context)) {
      header = h;
      rowsTotal = row;
      if (sample) {
        sample.push({ values, row, problem });
        if (!problem) sampled += 1;
        if (sampled >= SAMPLE_ROWS) await startScan();
        continue;
      }
      await visit(values, row, problem);
    }
    if (sample) await startScan();
    await flushExternal();
    if (rowsTotal === 0) {
      if (header.length === 0) await readHeaderAndSample(deps, context); // throws the precise error
      throw permanent('NO_ROWS', 'the file has a header but no data rows');
    }
    await deps.store.reportProgress(job.id, 'analyze-duplicates', { rowsTotal, rowsProcessed: rowsTotal });
    const done = scan as RowScan | null;
    if (done?.addresses) context.addresses = done.addresses;
    const output: AnalyzeOutput = {
      rowsTotal,
      columns: header.length,
      idColumn: done && done.idIndex >= 0 ? (header[done.idIndex] ?? null) : null,
      internal,
      external,
      ...(done?.tally ? { validation: done.tally } : {}),
    };
    return { output };
  },

  async 'detect-schema'(deps, context) {
    const { header, sample } = await readHeaderAndSample(deps, context);
    const schema = detectSchema(header, sample, context.job.config.fieldMapping);
    await deps.store.reportProgress(context.job.id, 'detect-schema', {
      rowsTotal: sample.length,
      rowsProcessed: sample.length,
    });
    for (const [key, column] of Object.entries(context.job.config.fieldMapping)) {
      if (column && !header.includes(column)) {
        throw needsUser(
          'MAPPING_INVALID',
          `settings.fieldMapping.${key} names column "${column}", which the file does not have`,
        );
      }
    }
    if (!schema.mapping.timestamp) {
      throw needsUser(
        'NO_TIMESTAMP',
        `no timestamp column found among ${header.length} column(s) (${header.slice(0, 10).join(', ')}${header.length > 10 ? ', ...' : ''}); ` +
          'name one in settings.fieldMapping.timestamp',
      );
    }
    return { output: schema };
  },

  async 'validate-schema'(deps, context) {
    const { job } = context;
    const schema = outputOf<DetectedSchema>(context, 'detect-schema');
    const analyzed = outputOf<AnalyzeOutput>(context, 'analyze-duplicates');
    const current = await deps.store.latestSchema(requireDataset(job));
    const drift = current ? compareSchemas(current.fields, schema.fields, job.config.schemaMode) : null;
    if (drift?.breaking && !job.approvedAt && context.file.source === 'upload') {
      throw needsUser(
        'SCHEMA_DRIFT',
        `the file's schema breaks the dataset's current schema (version ${current?.version}, mode ${job.config.schemaMode}): ${describeDrift(drift)}; approve the change to continue`,
      );
    }
    // analyze-duplicates checked every row with the schema detected from the same sample; a
    // different mapping (a restart after a change) needs a pass of its own.
    let tally = analyzed.validation ?? null;
    if (!tally || JSON.stringify(tally.mapping) !== JSON.stringify(schema.mapping)) {
      let scan: RowScan | null = null;
      for await (const { header, values, row, problem } of dataRows(deps, context)) {
        scan ??= rowScan(header, schema, context);
        scan.check(values, row, problem);
        if (row % PROGRESS_EVERY === 0) {
          await deps.store.reportProgress(job.id, 'validate-schema', {
            rowsTotal: analyzed.rowsTotal,
            rowsProcessed: row,
          });
        }
      }
      tally = scan?.tally ?? null;
      if (scan?.addresses) context.addresses = scan.addresses;
    }
    const { validRows, addressRows, invalidRows, rowErrors } = tally ?? {
      validRows: 0,
      addressRows: 0,
      invalidRows: 0,
      rowErrors: [],
    };
    await deps.store.reportProgress(job.id, 'validate-schema', {
      rowsTotal: analyzed.rowsTotal,
      rowsProcessed: analyzed.rowsTotal,
    });
    if (validRows === 0) {
      const first = rowErrors[0];
      throw needsUser(
        'NO_VALID_ROWS',
        `none of the ${invalidRows} row(s) is valid${first ? `; row ${first.row}: ${first.field} ${first.message}` : ''}`,
      );
    }
    const output: ValidateOutput = { validRows, addressRows, invalidRows, rowErrors, drift };
    return { output };
  },

  async 'needs-review'(_deps, context) {
    if (context.file.source === 'upload') return { output: { reasons: [] }, skipped: true };
    const analyzed = outputOf<AnalyzeOutput>(context, 'analyze-duplicates');
    const validated = outputOf<ValidateOutput>(context, 'validate-schema');
    const reasons = reviewReasons({
      rowsTotal: analyzed.rowsTotal,
      duplicates: analyzed.internal + analyzed.external,
      invalidRows: validated.invalidRows,
      drift: validated.drift,
    });
    if (reasons.length && !context.job.approvedAt) return { needsReview: reasons, output: { reasons } };
    return { output: { reasons } };
  },

  async 'create-schema-version'(deps, context) {
    const schema = outputOf<DetectedSchema>(context, 'detect-schema');
    const validated = outputOf<ValidateOutput>(context, 'validate-schema');
    const datasetId = requireDataset(context.job);
    const current = await deps.store.latestSchema(datasetId);
    const unchanged =
      current &&
      validated.drift &&
      !validated.drift.added.length &&
      !validated.drift.removed.length &&
      !validated.drift.changed.length;
    if (unchanged) return { output: { version: current.version, created: false } };
    const version = await deps.store.createSchemaVersion(
      datasetId,
      context.job.id,
      schema.fields,
      schema.mapping,
    );
    return { output: { version, created: true } };
  },

  async 'geocode-batch'(deps, context, record) {
    const { job } = context;
    const schema = outputOf<DetectedSchema>(context, 'detect-schema');
    const validated = outputOf<ValidateOutput>(context, 'validate-schema');
    // Validation counted the rows that need an address looked up; none means no pass over the file.
    if (!job.config.geocoding || !deps.geocoder || !schema.mapping.address || validated.addressRows === 0) {
      return { output: { addresses: 0, found: 0, failed: 0 } satisfies GeocodeOutput, skipped: true };
    }
    let addresses = context.addresses;
    if (!addresses) {
      addresses = new Set<string>();
      let columns: ColumnPositions | null = null;
      for await (const { header, values, problem } of dataRows(deps, context)) {
        if (problem) continue;
        columns ??= columnPositions(header, schema.mapping);
        const address = addressToGeocode(values, columns);
        if (address) addresses.add(address);
      }
    }
    if (addresses.size === 0)
      return { output: { addresses: 0, found: 0, failed: 0 } satisfies GeocodeOutput, skipped: true };
    // Addresses a previous attempt already resolved stay resolved.
    const done =
      record.rowsProcessed > 0 ? await deps.store.jobGeocodes(job.id) : new Map<string, GeocodeOutcome>();
    const todo = [...addresses].filter((address) => !done.has(address));
    const batchesTotal = Math.ceil(addresses.size / GEOCODE_BATCH);
    let processed = done.size;
    for (let i = 0; i < todo.length; i += GEOCODE_BATCH) {
      const batch = todo.slice(i, i + GEOCODE_BATCH);
      const results = await deps.geocoder.geocode(batch);
      processed += batch.length;
      await deps.store.saveJobGeocodes(job.id, results, {
        rowsTotal: addresses.size,
        rowsProcessed: processed,
        batchesTotal,
        batchesCurrent: Math.ceil(processed / GEOCODE_BATCH),
        batchRowsTotal: batch.length,
        batchRowsProcessed: batch.length,
      });
    }
    const all = await deps.store.jobGeocodes(job.id);
    const failed = [...all.values()].filter((outcome) => 'failure' in outcome).length;
    const output: GeocodeOutput = { addresses: addresses.size, found: addresses.size - failed, failed };
    const reason = context.file.source === 'upload' ? null : geocodingReviewReason(addresses.size, failed);
    if (reason && !job.approvedAt) return { needsReview: [reason], output };
    return { output };
  },

  async 'create-events'(deps, context, record) {
    const { job } = context;
    const datasetId = requireDataset(job);
    const schema = outputOf<DetectedSchema>(context, 'detect-schema');
    const analyzed = outputOf<AnalyzeOutput>(context, 'analyze-duplicates');
    const geocodes =
      context.records.get('geocode-batch')?.status === 'completed'
        ? await deps.store.jobGeocodes(job.id)
        : null;
    // Continue after the last committed batch: its events and these counters committed together.
    const resumeAfter = record.rowsProcessed;
    const counters = {
      created: record.counters.created ?? 0,
      updated: record.counters.updated ?? 0,
      duplicates: record.counters.duplicates ?? 0,
      invalid: record.counters.invalid ?? 0,
      geocoded: record.counters.geocoded ?? 0,
    };
    const batchesTotal = Math.ceil(analyzed.rowsTotal / deps.batchSize);
    const quota = await eventQuotaOf(deps, context.file);
    const seen = new Set<string>();
    let columns: ColumnPositions | null = null;
    let idIndex = -2;
    let batch: NewEvent[] = [];
    /** The file row of each event in `batch`. */
    let batchRows: number[] = [];
    let batchDuplicates = 0;
    let batchInvalid = 0;
    let batchGeocoded = 0;
    let lastRow = resumeAfter;
    // Batches are stored while the next is read and built (the database and this process work at
    // the same time): one at a time, or `writers` at once, each on its own connection, for an import
    // whose counts are deferred (its writers do not meet on count rows). Either way they commit one
    // after the other, in file order: each batch's transaction waits for the commit of the one
    // before it and then moves the stored rows_processed on from where that one left it, so that
    // it stays a high-water mark below which every row is committed.
    const inFlight: Promise<unknown>[] = [];
    let previous: Promise<unknown> = Promise.resolve();
    let committedTo = resumeAfter;
    const writers = context.writers ?? 1;
    const store = (
      events: NewEvent[],
      skipped: BatchSkips,
      rowsBefore: number,
      row: number,
      ready: () => Promise<unknown>,
    ) =>
      deps.store.commitEventBatch(
        job.id,
        datasetId,
        events,
        job.config.duplicateHandling,
        {
          rowsBefore,
          rowsTotal: analyzed.rowsTotal,
          rowsProcessed: row,
          batchesTotal,
          batchesCurrent: Math.ceil(row / deps.batchSize),
          batchRowsTotal: deps.batchSize,
          batchRowsProcessed: deps.batchSize,
        },
        (result) => batchDelta(events.length, skipped, result),
        writers > 1 ? { ready } : undefined,
        quota ?? undefined,
      );
    const commit = async (
      events: NewEvent[],
      rows: number[],
      skipped: BatchSkips,
      rowsBefore: number,
      row: number,
      ready: () => Promise<unknown>,
    ) => {
      const stored = await storeWithinQuota(events, rows, row, (kept, keptSkips, lastRow) =>
        store(kept, keptSkips ?? skipped, rowsBefore, lastRow, ready),
      );
      // The stage's counters as committed: this batch's and every one before it.
      Object.assign(counters, stored.counters);
    };
    const flush = async (row: number) => {
      const events = batch;
      const rows = batchRows;
      const skipped = { duplicates: batchDuplicates, invalid: batchInvalid, geocoded: batchGeocoded };
      batch = [];
      batchRows = [];
      batchDuplicates = 0;
      batchInvalid = 0;
      batchGeocoded = 0;
      while (inFlight.length >= writers) await inFlight.shift();
      const earlier = previous;
      const started = commit(events, rows, skipped, committedTo, row, () => earlier);
      committedTo = row;
      // Observed by a later flush or at the end; until then it must not count as unhandled.
      started.catch(() => {});
      previous = started;
      inFlight.push(started);
    };
    try {
      for await (const { header, values, row, problem } of dataRows(deps, context)) {
        if (idIndex === -2) {
          columns = columnPositions(header, schema.mapping);
          idIndex = idColumnIndex(header, schema, context);
        }
        const cols = columns as ColumnPositions;
        const key = problem
          ? ({ ok: false, reason: problem.message } as const)
          : uniqueIdFor(values, idIndex, job.config.idStrategy);
        // Internal duplicates: the first occurrence wins, also across a resume.
        const duplicate = key.ok && seen.has(key.id);
        if (key.ok) seen.add(key.id);
        if (row <= resumeAfter) continue;
        lastRow = row;
        if (!key.ok) batchInvalid += 1;
        else if (duplicate) batchDuplicates += 1;
        else {
          let geocoded: Location | null = null;
          if (geocodes) {
            const address = addressToGeocode(values, cols);
            const outcome = address ? geocodes.get(address) : undefined;
            if (outcome && 'location' in outcome) geocoded = outcome.location;
          }
          const result = rowToEvent(header, values, cols, key.id, geocoded);
          if (result.ok) {
            if (geocoded && result.event.location === geocoded) batchGeocoded += 1;
            batch.push(result.event);
            batchRows.push(row);
          } else batchInvalid += 1;
        }
        if (row % deps.batchSize === 0) await flush(row);
      }
      if (lastRow > resumeAfter || batch.length) await flush(lastRow);
    } finally {
      // A failure while reading leaves the batches in flight to finish before the stage's failure is handled.
      await Promise.all(inFlight.map((started) => started.catch(() => {})));
    }
    // In file order: the first failure is the stage's (the batches after it failed because of it).
    for (const started of inFlight) await started;
    return { output: { ...counters, rowsTotal: analyzed.rowsTotal } };
  },
};

/**
 * create-events, with the read API's counts of a bulk import into an empty dataset left to one pass
 * afterwards (docs/ingestion.md, "Deferred counts"). A resumed import finds its dataset pending still.
 */
async function createEventsDeferringCounts(
  deps: IngestDeps,
  context: Context,
  record: StoredStage,
): Promise<TaskResult> {
  const datasetId = requireDataset(context.job);
  const analyzed = outputOf<AnalyzeOutput>(context, 'analyze-duplicates');
  const deferred =
    record.rowsProcessed === 0 && analyzed.rowsTotal >= deps.deferCountsMinRows
      ? await deps.store.deferDatasetCounts(datasetId)
      : await deps.store.datasetCountsPending(datasetId);
  try {
    // While the dataset is pending the count triggers leave its rows out: writers of its batches
    // meet on no count row. (Should a refresh clear the flag meanwhile, the triggers count them
    // again and two writers may wait on each other's count rows: commitEventBatch's lock timeout
    // turns that into a recoverable failure, and the resumed stage stores one batch at a time.)
    return await TASKS['create-events'](
      deps,
      { ...context, writers: deferred ? deps.deferredWriters : 1 },
      record,
    );
  } finally {
    // Whether every row was stored or not, what is stored gets counted. A failure to queue is not
    // the import's: the schedule manager's sweep refreshes datasets left pending.
    if (await deps.store.datasetCountsPending(datasetId).catch(() => false))
      await deps.countsRefresh.enqueueCountsRefresh(datasetId).catch(() => {});
  }
}

type BatchSkips = { duplicates: number; invalid: number; geocoded: number };
type EventCounters = {
  created: number;
  updated: number;
  duplicates: number;
  invalid: number;
  geocoded: number;
};

/** What one stored batch adds to the stage's counters. */
function batchDelta(
  batchLength: number,
  skipped: BatchSkips,
  stored: { inserted: number; updated: number },
): EventCounters {
  return {
    created: stored.inserted,
    updated: stored.updated,
    duplicates: skipped.duplicates + (batchLength - stored.inserted - stored.updated),
    invalid: skipped.invalid,
    geocoded: skipped.geocoded,
  };
}

/** A completed job that skipped invalid rows says so in its errorLog. */
function completionWarnings(context: Context): JobErrorLog | null {
  const validated = context.records.get('validate-schema')?.output as ValidateOutput | undefined;
  const analyzed = context.records.get('analyze-duplicates')?.output as AnalyzeOutput | undefined;
  if (!validated || validated.invalidRows === 0) return null;
  const first = validated.rowErrors[0];
  return {
    lastError:
      `${validated.invalidRows} of ${analyzed?.rowsTotal ?? validated.invalidRows + validated.validRows} rows were invalid and not imported` +
      (first ? `; row ${first.row}: ${first.field} ${first.message}` : ''),
    code: 'INVALID_ROWS',
    rowErrors: validated.rowErrors,
  };
}

function requireDataset(job: IngestJob): number {
  if (job.datasetId === null)
    throw permanent('MISSING_CONFIG', 'the job has no target dataset (was it deleted?)');
  return job.datasetId;
}

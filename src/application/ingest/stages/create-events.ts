import type { Location, NewEvent } from '../../../domain/read/events.ts';
import { type LocatedByGeocoder, locatedByGeocoder } from '../../../domain/ingest/geocoding/located-by.ts';
import {
  addressToGeocode,
  type ColumnPositions,
  columnPositions,
  rowToEvent,
  uniqueIdFor,
} from '../../../domain/ingest/rows.ts';
import type { StoredStage } from '../../../ports/ingest/ingest-job-store.ts';
import { eventQuotaOf, storeWithinQuota } from '../event-quota.ts';
import { dataRows, idColumnIndex } from '../job-rows.ts';
import type { DeferredCounts } from '../../../ports/ingest/deferred-counts.ts';
import type { EventBatchWriter } from '../../../ports/ingest/event-batch-writer.ts';
import type { JobGeocodes } from '../../../ports/ingest/job-geocodes.ts';
import type { CreateEventsOutput, EventCounters } from './outputs.ts';
import {
  type IngestDeps,
  outputOf,
  requireDataset,
  type StageContext,
  type TaskResult,
} from './stage-context.ts';

// create-events: every valid, not duplicated row becomes an event (with its geocoded location when
// geocode-batch ran), stored in batches that commit with the stage's progress, so that a restarted
// stage continues after the last batch it committed.

type CreateEventsDeps = Pick<
  IngestDeps,
  'files' | 'batchSize' | 'batchBytes' | 'deferCountsMinRows' | 'deferredWriters' | 'countsRefresh' | 'quotas'
> & { store: EventBatchWriter & DeferredCounts & JobGeocodes };

/**
 * create-events, with the read API's counts of a bulk import into an empty dataset left to one pass
 * afterwards (docs/ingestion.md, "Deferred counts"). A resumed import finds its dataset pending still.
 */
export async function createEventsDeferringCounts(
  deps: CreateEventsDeps,
  context: StageContext,
  record: StoredStage,
): Promise<TaskResult<CreateEventsOutput>> {
  const datasetId = requireDataset(context.job);
  const analyzed = outputOf(context, 'analyze-duplicates');
  const deferred =
    record.rowsProcessed === 0 && analyzed.rowsTotal >= deps.deferCountsMinRows
      ? await deps.store.deferDatasetCounts(datasetId)
      : await deps.store.datasetCountsPending(datasetId);
  try {
    // While the dataset is pending the count triggers leave its rows out: writers of its batches
    // meet on no count row. (Should a refresh clear the flag meanwhile, the triggers count them
    // again and two writers may wait on each other's count rows: commitEventBatch's lock timeout
    // turns that into a recoverable failure, and the resumed stage stores one batch at a time.)
    return await createEvents(deps, { ...context, writers: deferred ? deps.deferredWriters : 1 }, record);
  } finally {
    // Whether every row was stored or not, what is stored gets counted. A failure to queue is not
    // the import's: the schedule manager's sweep refreshes datasets left pending.
    if (await deps.store.datasetCountsPending(datasetId).catch(() => false))
      await deps.countsRefresh.enqueueCountsRefresh(datasetId).catch(() => {});
  }
}

type BatchSkips = { duplicates: number; invalid: number; geocoded: number };

/**
 * A batch is stored when it holds `batchSize` rows or about this many bytes of cell text, whichever
 * comes first (issue 30 §7): 20,000 rows of 36 kB cells held 720 MB of text in one batch, and the
 * worker grew to 1,266 MB on a 72 MB file. The worker holds the batch being built and the ones
 * being stored (one, or `deferredWriters`), each with its copies on the way to the database.
 */
export const BATCH_MAX_BYTES = 16 * 1024 * 1024;

/** About the memory a row's values take as JavaScript strings (two bytes a UTF-16 unit, and a little per cell). */
function rowBytes(values: readonly string[]): number {
  let bytes = 0;
  for (const value of values) bytes += 2 * value.length + 16;
  return bytes;
}

async function createEvents(
  deps: CreateEventsDeps,
  context: StageContext,
  record: StoredStage,
): Promise<TaskResult<CreateEventsOutput>> {
  const { job } = context;
  const datasetId = requireDataset(job);
  const schema = outputOf(context, 'detect-schema');
  const analyzed = outputOf(context, 'analyze-duplicates');
  const geocodes =
    context.records.get('geocode-batch')?.status === 'completed'
      ? await deps.store.jobGeocodes(job.id)
      : null;
  // Continue after the last committed batch: its events and these counters committed together.
  const resumeAfter = record.rowsProcessed;
  const counters: EventCounters = {
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
  let batchBytes = 0;
  const maxBatchBytes = deps.batchBytes ?? BATCH_MAX_BYTES;
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
        // The rows this batch covered (the last one of a file is usually shorter than batchSize).
        batchRowsTotal: row - rowsBefore,
        batchRowsProcessed: row - rowsBefore,
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
    // Stopped: no further batch is stored; the stage resumes after the last one committed.
    context.signal?.throwIfAborted();
    const events = batch;
    const rows = batchRows;
    const skipped = { duplicates: batchDuplicates, invalid: batchInvalid, geocoded: batchGeocoded };
    batch = [];
    batchRows = [];
    batchDuplicates = 0;
    batchInvalid = 0;
    batchGeocoded = 0;
    batchBytes = 0;
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
        let locatedBy: LocatedByGeocoder | null = null;
        if (geocodes) {
          const address = addressToGeocode(values, cols);
          const outcome = address ? geocodes.get(address) : undefined;
          if (address && outcome && 'location' in outcome) {
            geocoded = outcome.location;
            locatedBy = locatedByGeocoder(address, outcome);
          }
        }
        const result = rowToEvent(header, values, cols, key.id, geocoded, locatedBy);
        if (result.ok) {
          if (geocoded && result.event.location === geocoded) batchGeocoded += 1;
          // Its provenance: the job (commitEventBatch's) and this row.
          result.event.sourceRow = row;
          batch.push(result.event);
          batchRows.push(row);
          batchBytes += rowBytes(values);
        } else batchInvalid += 1;
      }
      if (row - committedTo >= deps.batchSize || batchBytes >= maxBatchBytes) await flush(row);
    }
    if (lastRow > resumeAfter || batch.length) await flush(lastRow);
  } finally {
    // A failure while reading leaves the batches in flight to finish before the stage's failure is handled.
    await Promise.all(inFlight.map((started) => started.catch(() => {})));
  }
  // In file order: the first failure is the stage's (the batches after it failed because of it).
  for (const started of inFlight) await started;
  return { output: { ...counters, rowsTotal: analyzed.rowsTotal } };
}

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

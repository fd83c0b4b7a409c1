import { geocodingReviewReason } from '../../../domain/ingest/review.ts';
import { addressToGeocode, type ColumnPositions, columnPositions } from '../../../domain/ingest/rows.ts';
import type { GeocodeOutcome } from '../../../ports/ingest/geocoder.ts';
import type { StoredStage } from '../../../ports/ingest/ingest-job-store.ts';
import { dataRows } from '../job-rows.ts';
import type { Geocoder } from '../../../ports/ingest/geocoder.ts';
import type { JobGeocodes } from '../../../ports/ingest/job-geocodes.ts';
import type { SourceFiles } from '../../../ports/ingest/source-files.ts';
import type { GeocodeOutput } from './outputs.ts';
import { outputOf, type StageContext, type TaskResult } from './stage-context.ts';

// geocode-batch: the distinct addresses of rows without coordinates, looked up in batches; each
// batch's answers are stored for the job (ingest_job_geocodes) with the stage's progress, so a
// resumed stage asks only for the addresses not answered yet.

type GeocodeDeps = { files: SourceFiles; geocoder: Geocoder | null; store: JobGeocodes };

const GEOCODE_BATCH = 200;
const NOTHING: GeocodeOutput = { addresses: 0, found: 0, failed: 0, notFound: 0, lowConfidence: 0 };

export async function geocodeBatch(
  deps: GeocodeDeps,
  context: StageContext,
  record: StoredStage,
): Promise<TaskResult<GeocodeOutput>> {
  const { job } = context;
  const schema = outputOf(context, 'detect-schema');
  const validated = outputOf(context, 'validate-schema');
  // Validation counted the rows that need an address looked up; none means no pass over the file.
  if (!job.config.geocoding || !deps.geocoder || !schema.mapping.address || validated.addressRows === 0) {
    return { output: NOTHING, skipped: true };
  }
  const addresses = context.addresses ?? (await collectAddresses(deps, context));
  if (addresses.size === 0) return { output: NOTHING, skipped: true };
  // Addresses a previous attempt already resolved stay resolved.
  const done =
    record.rowsProcessed > 0 ? await deps.store.jobGeocodes(job.id) : new Map<string, GeocodeOutcome>();
  const todo = [...addresses].filter((address) => !done.has(address));
  const batchesTotal = Math.ceil(addresses.size / GEOCODE_BATCH);
  let processed = done.size;
  // Scheduled and scraper imports run unattended: an online provider asks at its slower rate.
  const scheduled = context.file.source !== 'upload';
  for (let i = 0; i < todo.length; i += GEOCODE_BATCH) {
    context.signal?.throwIfAborted();
    const batch = todo.slice(i, i + GEOCODE_BATCH);
    const results = await deps.geocoder.geocode(batch, { scheduled });
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
  const failures = [...all.values()].filter((outcome) => 'failure' in outcome);
  const failed = failures.length;
  const lowConfidence = failures.filter((outcome) => 'failure' in outcome && outcome.lowConfidence).length;
  const output: GeocodeOutput = {
    addresses: addresses.size,
    found: addresses.size - failed,
    failed,
    notFound: failed - lowConfidence,
    lowConfidence,
  };
  const reason = context.file.source === 'upload' ? null : geocodingReviewReason(addresses.size, failed);
  if (reason && !job.approvedAt) return { needsReview: [reason], output };
  return { output };
}

/**
 * The addresses analyze-duplicates collects are kept in memory only (there may be millions); a run
 * that did not make that pass (a restart, a reset to this stage) reads them from the file again.
 */
async function collectAddresses(deps: GeocodeDeps, context: StageContext): Promise<Set<string>> {
  const schema = outputOf(context, 'detect-schema');
  const addresses = new Set<string>();
  let columns: ColumnPositions | null = null;
  for await (const { header, values, problem } of dataRows(deps, context)) {
    if (problem) continue;
    columns ??= columnPositions(header, schema.mapping);
    const address = addressToGeocode(values, columns);
    if (address) addresses.add(address);
  }
  return addresses;
}

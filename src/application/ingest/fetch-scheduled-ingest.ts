import { NotFoundError } from '../../domain/errors.ts';
import { classifyFailure } from '../../domain/ingest/failures.ts';
import { duplicateReviewFor } from '../../domain/ingest/review.ts';
import { redactSourceUrl } from '../../domain/ingest/provenance.ts';
import type { FileStore } from '../../ports/ingest/file-store.ts';
import type { IngestQueue } from '../../ports/ingest/ingest-queue.ts';
import type { UrlFetcher } from '../../ports/url-fetcher.ts';
import { createIngestFile, importQuotaAmounts } from './create-ingest-file.ts';
import { failureFacts } from './run-ingest-job.ts';
import type { ScheduleDeps } from './scheduled-ingests.ts';

// One scheduled run: fetch the URL (SSRF guard, size and time limits) and hand the file to the
// ingestion pipeline as an automated import (so it goes through needs-review). The first run creates
// the dataset and the schedule keeps it for the next runs. A failed run is recorded on its row and
// does not stand in the way of the next scheduled one. Each file carries the schedule's duplicate
// review for this run: once a run imported into the dataset, rows found there are the feed's own.

type FetchOutcome =
  { status: 'imported'; ingestFileId: number } | { status: 'failed' | 'retry'; error: string };

export async function fetchScheduledIngest(
  deps: ScheduleDeps & { fetcher: UrlFetcher; files: FileStore; ingestQueue: IngestQueue },
  runId: number,
  attempt: { final: boolean },
): Promise<FetchOutcome> {
  const run = await deps.schedules.getRun(runId);
  if (!run) throw new NotFoundError(`scheduled run ${runId} does not exist`);
  if (run.status === 'imported') return { status: 'imported', ingestFileId: run.ingestFileId ?? 0 };
  const schedule = await deps.schedules.get(run.scheduledIngestId);
  if (!schedule) return { status: 'failed', error: 'the schedule was deleted' };
  await deps.schedules.finishRun(runId, { status: 'fetching' });
  const source = run.triggeredBy === 'webhook' ? 'webhook' : 'scheduled';
  const quota = importQuotaAmounts(source, 1);
  let taken: number | null = null;
  let stored: string | null = null;
  try {
    // Taken before the fetch, given back when no file came of it (a failed fetch is retried).
    if (schedule.createdBy !== null) await deps.quotas.take(schedule.createdBy, quota);
    taken = schedule.createdBy;
    const fetchedAt = deps.clock.now().toISOString();
    const fetched = await deps.fetcher.fetch(schedule.url);
    const { storedPath, bytes, sha256 } = await deps.files.writeNew('scheduled', '.csv', fetched.body);
    stored = storedPath;
    const importedBefore =
      schedule.datasetId !== null &&
      (await deps.schedules.hasCompletedImport(schedule.id, schedule.datasetId));
    const settings = {
      ...schedule.settings,
      duplicateReview: duplicateReviewFor(schedule.reviewDuplicates, importedBefore),
      targets: {
        0: schedule.datasetId ? { datasetId: schedule.datasetId } : { newDataset: { title: schedule.name } },
      },
    };
    const created = await createIngestFile(
      { store: deps.store, queue: deps.ingestQueue, quotas: deps.quotas },
      {
        originalName: fetched.fileName.endsWith('.csv') ? fetched.fileName : `${fetched.fileName}.csv`,
        storedPath,
        sizeBytes: bytes,
        mimeType: fetched.contentType,
        format: 'csv',
        source,
        catalogId: schedule.catalogId,
        userId: schedule.createdBy,
        settings,
        sheets: [null],
        quotaTaken: true,
        origin: {
          sha256,
          url: {
            address: redactSourceUrl(schedule.url),
            fetchedAt,
            etag: fetched.etag ?? null,
            lastModified: fetched.lastModified ?? null,
          },
        },
      },
    );
    stored = null; // the ingest file refers to it now
    const datasetId = created.jobs[0]?.datasetId ?? null;
    if (!schedule.datasetId && datasetId) await deps.schedules.update(schedule.id, { datasetId });
    await deps.schedules.finishRun(runId, { status: 'imported', ingestFileId: created.file.id });
    return { status: 'imported', ingestFileId: created.file.id };
  } catch (error) {
    if (taken !== null) await deps.quotas.give(taken, quota);
    // No ingest file refers to it: the next attempt fetches again.
    if (stored !== null) await deps.files.remove(stored);
    const facts = failureFacts(error);
    const classification = classifyFailure(facts);
    const message = `${facts.message} (${classification.type})`;
    if (classification.type === 'recoverable' && !attempt.final) {
      await deps.schedules.finishRun(runId, { status: 'fetching', error: message });
      return { status: 'retry', error: message };
    }
    await deps.schedules.finishRun(runId, { status: 'failed', error: message });
    return { status: 'failed', error: message };
  }
}

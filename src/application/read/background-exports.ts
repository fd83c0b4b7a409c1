import { canFollowExport, type Viewer } from '../../domain/access.ts';
import { DomainError, NotFoundError } from '../../domain/errors.ts';
import type { EventFilter, RawQuery } from '../../domain/read/read-query.ts';
import type { ExportJob, ExportJobQueue, ExportJobStore } from '../../ports/read/export-jobs.ts';

// Background exports of a view (issue 36 §1). A first download of a kept-file format (GeoPackage,
// FlatGeobuf, GeoParquet, PMTiles: their answer waits for the whole file) whose estimated size
// passes EXPORT_SYNC_MAX_EVENTS is not written inside the request: it becomes a job (one per view,
// format and data version for each requester; the same request again joins it) that a pg-boss worker
// runs through the very same exportEvents (export-events.ts), into the same file store. The requester
// follows it at /api/v1/exports/{id}; when done, the status answers 303 to the download URL, which
// then finds the kept file.
//
// A running job renews a lease every HEARTBEAT_MS; a status read that finds the lease older than
// EXPORT_LEASE_SECONDS knows its worker stopped (killed, crashed) and sends the job again, up to
// EXPORT_MAX_ATTEMPTS times, then says failed: a job is never left "running" by a dead worker.

const EXPORT_LEASE_SECONDS = 10;
const EXPORT_HEARTBEAT_MS = 2_000;
export const EXPORT_MAX_ATTEMPTS = 3;

export type BackgroundExports = {
  jobs: ExportJobStore;
  queue: ExportJobQueue;
  /** Above this many events (estimated), a first export of a kept-file format runs as a job. */
  syncMaxEvents: number;
  /** The estimate: the events the view holds for this viewer (the read model's counts). */
  count: (viewer: Viewer, filter: EventFilter) => Promise<number>;
};

/** Whether the export runs in the background, and then its job (joined or new). */
export async function startBackgroundExport(
  background: BackgroundExports,
  request: { viewer: Viewer; filter: EventFilter; query: RawQuery; format: string; exportKey: string },
): Promise<ExportJob | null> {
  const estimated = await background.count(request.viewer, request.filter);
  if (estimated <= background.syncMaxEvents) return null;
  const { job, created } = await background.jobs.startOrJoin({
    exportKey: request.exportKey,
    format: request.format,
    query: request.query,
    viewer: request.viewer,
    estimated,
  });
  if (created) await background.queue.enqueue(job.id);
  return job;
}

/** What GET /api/v1/exports/{id} answers: the job (its lease checked), for its requester only. */
export async function exportStatus(
  background: Pick<BackgroundExports, 'jobs' | 'queue'>,
  viewer: Viewer,
  id: string,
): Promise<ExportJob> {
  const job = await background.jobs.find(id);
  if (
    !job ||
    !canFollowExport(viewer, {
      requestedBy: job.viewer?.id ?? null,
      requestedWithKey: job.viewer?.key?.id ?? null,
    })
  )
    throw new NotFoundError('No such export', { code: 'EXPORT_NOT_FOUND' });
  const stalled =
    job.state === 'running' &&
    job.heartbeatAgeSeconds !== null &&
    job.heartbeatAgeSeconds > EXPORT_LEASE_SECONDS;
  if (!stalled) return job;
  if (job.attempts >= EXPORT_MAX_ATTEMPTS) {
    const reason = `the export's worker stopped ${job.attempts} times (${EXPORT_LEASE_SECONDS} s without a heartbeat)`;
    await background.jobs.finish(job.id, { state: 'failed', reason });
    return { ...job, state: 'failed', reason, heartbeatAgeSeconds: null };
  }
  if (await background.jobs.requeueStalled(job.id, EXPORT_LEASE_SECONDS))
    await background.queue.enqueue(job.id);
  return (await background.jobs.find(id)) ?? job;
}

/** Why a job failed, as its requester may read it: a domain error's message, else a generic one. */
function reasonOf(error: unknown): string {
  if (error instanceof DomainError) return error.message;
  return 'the export failed on the server; request it again';
}

/**
 * Runs one job: claims it, writes the file by `write` (exportEvents with the job's viewer and query,
 * reporting the events written), renewing the lease meanwhile, and records done or failed. A failure
 * is the job's answer, not a pg-boss retry: the same inputs would fail again.
 */
export async function runExportJob(
  jobs: ExportJobStore,
  id: string,
  write: (job: ExportJob, progress: (written: number) => void) => Promise<void>,
): Promise<void> {
  const job = await jobs.find(id);
  if (!job || job.state === 'done' || job.state === 'failed') return;
  if (!(await jobs.claim(id))) return;
  let written = 0;
  const lease = setInterval(() => {
    jobs.heartbeat(id, written).catch(() => {});
  }, EXPORT_HEARTBEAT_MS);
  try {
    await write(job, (count) => {
      written = count;
    });
    await jobs.finish(id, { state: 'done', written: written > 0 ? written : job.estimated });
  } catch (error) {
    await jobs.finish(id, { state: 'failed', reason: reasonOf(error) });
  } finally {
    clearInterval(lease);
  }
}

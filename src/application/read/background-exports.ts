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
// A running job renews a lease every HEARTBEAT_MS. A status read, or a request that joins the job,
// that finds the lease older than EXPORT_LEASE_SECONDS knows its worker stopped (killed, crashed)
// and sends the job again, up to EXPORT_MAX_ATTEMPTS times, then says failed; one that finds a job
// queued and not taken for EXPORT_RESEND_SECONDS sends it again (its queue message may be lost: the
// process stopped between the job's insert and the send). So a job someone follows is never left
// queued or running by a dead worker; one nobody follows keeps its row until it is read or joined.
// A worker takes a job only while it is queued or its lease ran out (the store's claim), so a job
// sent twice still runs once at a time.

const EXPORT_LEASE_SECONDS = 10;
const EXPORT_RESEND_SECONDS = 60;
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
    exportKey: joinKey(request.exportKey, request.viewer),
    format: request.format,
    query: request.query,
    viewer: request.viewer,
    estimated,
  });
  if (created) {
    await background.queue.enqueue(job.id);
    return job;
  }
  return reviveIfStalled(background, job);
}

/**
 * The key a request joins a job by: the export's key and the requester's credential (a session, or
 * one API key), as canFollowExport reads them; so a request is never handed a job whose status its
 * own credential may not read (a session's job is not joined by the same account's key).
 */
function joinKey(exportKey: string, viewer: Viewer): string {
  return `${exportKey}\n${viewer?.key ? `key ${viewer.key.id}` : 'session'}`;
}

/** A job whose worker stopped, or whose queue message was lost, sent again (or failed at the cap). */
async function reviveIfStalled(
  background: Pick<BackgroundExports, 'jobs' | 'queue'>,
  job: ExportJob,
): Promise<ExportJob> {
  const bound = job.state === 'running' ? EXPORT_LEASE_SECONDS : EXPORT_RESEND_SECONDS;
  const stalled =
    (job.state === 'running' || job.state === 'queued') &&
    job.idleSeconds !== null &&
    job.idleSeconds > bound;
  if (!stalled) return job;
  if (job.state === 'running' && job.attempts >= EXPORT_MAX_ATTEMPTS) {
    const reason = `the export's worker stopped ${job.attempts} times (${EXPORT_LEASE_SECONDS} s without a heartbeat)`;
    await background.jobs.finish(job.id, { state: 'failed', reason });
    return { ...job, state: 'failed', reason, idleSeconds: null };
  }
  if (await background.jobs.requeueStalled(job.id, bound)) await background.queue.enqueue(job.id);
  return (await background.jobs.find(job.id)) ?? job;
}

/** What GET /api/v1/exports/{id} answers: the job (stalled ones revived), for its requester only. */
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
  return reviveIfStalled(background, job);
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
  if (!(await jobs.claim(id, EXPORT_LEASE_SECONDS))) return;
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

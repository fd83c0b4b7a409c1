import { requireViewer, type Viewer } from '../../domain/access.ts';
import { assertMayRequestExport, DATA_EXPORT_LIMITS } from '../../domain/accounts/data-export.ts';
import { csvField } from '../../domain/csv-field.ts';
import { DomainError, NotFoundError } from '../../domain/errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type {
  DataExport,
  DataExportQueue,
  DataExportStore,
  ExportArchive,
  UserDataReader,
} from '../../ports/accounts/data-export-store.ts';

// A user's export of their own data: requested (one active at a time, a few a day), built by the
// `data-export` job into a ZIP of JSON and CSV, downloaded by its owner only until it expires.
// Anyone else asking about an export is told it does not exist.

export type DataExportDeps = {
  exports: DataExportStore;
  queue: DataExportQueue;
  reader: UserDataReader;
  archive: ExportArchive;
  clock: Clock;
};

const notFound = (id: number) =>
  new NotFoundError(`data export ${id} does not exist`, { code: 'EXPORT_NOT_FOUND' });

export async function requestDataExport(
  deps: Pick<DataExportDeps, 'exports' | 'queue' | 'clock'>,
  viewer: Viewer,
): Promise<DataExport> {
  const user = requireViewer(viewer);
  const now = deps.clock.now();
  const dayAgo = new Date(now.getTime() - 24 * 60 * 60 * 1000);
  assertMayRequestExport(
    await deps.exports.hasActive(user.id),
    await deps.exports.requestsSince(user.id, dayAgo),
    now,
  );
  const created = await deps.exports.create(user.id);
  // Two requests at once: the database's one-active rule lets one through.
  if (!created) assertMayRequestExport(true, { count: 0, oldest: null }, now);
  const record = created as DataExport;
  await deps.queue.enqueueDataExport(record.id);
  return record;
}

/** The export, for its owner only (admins included in "others": an export is personal data). */
export async function getDataExport(
  deps: Pick<DataExportDeps, 'exports'>,
  viewer: Viewer,
  id: number,
): Promise<DataExport> {
  const user = requireViewer(viewer);
  const found = await deps.exports.get(id);
  if (!found || found.userId !== user.id) throw notFound(id);
  return found;
}

/** The caller's most recent export (the account page shows it with its download), or null. */
export async function latestDataExport(
  deps: Pick<DataExportDeps, 'exports'>,
  viewer: Viewer,
): Promise<DataExport | null> {
  return deps.exports.latestFor(requireViewer(viewer).id);
}

export async function openDataExport(
  deps: Pick<DataExportDeps, 'exports' | 'archive' | 'clock'>,
  viewer: Viewer,
  id: number,
): Promise<{ record: DataExport; stream: NodeJS.ReadableStream }> {
  const record = await getDataExport(deps, viewer, id);
  if (record.status !== 'ready') {
    throw new DomainError('conflict', `export ${id} is ${record.status}, not ready to download`, {
      code: 'EXPORT_NOT_READY',
    });
  }
  if (
    !record.storedPath ||
    (record.expiresAt && Date.parse(record.expiresAt) <= deps.clock.now().getTime())
  ) {
    throw new DomainError('conflict', `export ${id} expired; request a new one`, { code: 'EXPORT_EXPIRED' });
  }
  return { record, stream: deps.archive.open(record.storedPath) };
}

async function* jsonFile(load: () => Promise<unknown>) {
  yield `${JSON.stringify(await load(), null, 2)}\n`;
}

const EVENT_COLUMNS = [
  'id',
  'dataset',
  'uniqueId',
  'title',
  'eventTimestamp',
  'longitude',
  'latitude',
  'data',
];

async function* eventsCsv(reader: UserDataReader, userId: number, signal?: AbortSignal) {
  yield `${EVENT_COLUMNS.join(',')}\r\n`;
  let after = 0;
  for (;;) {
    signal?.throwIfAborted();
    const page = await reader.events(userId, after, 5_000);
    if (page.length === 0) return;
    yield page.map((event) => `${EVENT_COLUMNS.map((c) => csvField(event[c])).join(',')}\r\n`).join('');
    after = page.at(-1)?.id as number;
  }
}

/**
 * The `data-export` job: writes the ZIP and marks the export ready (or failed, saying why).
 * `signal` aborted (its worker shuts down): it stops at the next page of events, removes what it
 * wrote, leaves the export `running` and throws, so that the job's retry builds it again.
 */
export async function buildDataExport(
  deps: DataExportDeps,
  exportId: number,
  signal?: AbortSignal,
): Promise<void> {
  const record = await deps.exports.get(exportId);
  if (!record || (record.status !== 'queued' && record.status !== 'running')) return;
  await deps.exports.markRunning(exportId);
  const { reader } = deps;
  const userId = record.userId;
  async function* entries() {
    yield { name: 'account.json', content: jsonFile(() => reader.account(userId)) };
    yield { name: 'catalogs.json', content: jsonFile(() => reader.catalogs(userId)) };
    yield { name: 'datasets.json', content: jsonFile(() => reader.datasets(userId)) };
    yield { name: 'events.csv', content: eventsCsv(reader, userId, signal) };
    yield { name: 'imports.json', content: jsonFile(() => reader.imports(userId)) };
    yield { name: 'scrapers.json', content: jsonFile(() => reader.scrapers(userId)) };
    yield { name: 'scraper-runs.json', content: jsonFile(() => reader.scraperRuns(userId)) };
  }
  try {
    const file = await deps.archive.write(exportId, entries());
    const expiresAt = new Date(deps.clock.now().getTime() + DATA_EXPORT_LIMITS.ttlMs).toISOString();
    await deps.exports.markReady(exportId, { ...file, expiresAt });
  } catch (error) {
    if (signal?.aborted) throw error;
    await deps.exports.markFailed(exportId, error instanceof Error ? error.message : String(error));
  }
}

/** The schedule manager's clean-up: files of expired exports go (the records stay, expired). */
export async function removeExpiredExports(
  deps: Pick<DataExportDeps, 'exports' | 'archive' | 'clock'>,
): Promise<{ removed: number }> {
  const expired = await deps.exports.expired(deps.clock.now(), 100);
  for (const record of expired) {
    if (record.storedPath) await deps.archive.remove(record.storedPath);
    await deps.exports.forgetFile(record.id);
  }
  return { removed: expired.length };
}

import { fitsQuota, type QuotaLimit, type QuotaName } from '../accounts/quotas.ts';

// What an import would meet in its caller's quotas, said before the work with the numbers (design
// §10: limits are said before the work). The same decision answers the upload route before it reads
// a body and the import wizard before the start (application/ingest/import-allowance.ts).

/** One quota as it stands now: its limit (null: unlimited) and its usage. */
export type QuotaStanding = { quota: QuotaName; used: number; limit: QuotaLimit };

/** What the import would take. Rows and size are known once the file is uploaded. */
export type ImportRequest = {
  /** One per sheet: each sheet is an import job. */
  sheets: number;
  /** Whether the file counts as an upload today (the wizard's start and a direct upload do). */
  upload: boolean;
  sizeBytes?: number;
  /**
   * The draft storage (draftStorageMB) the request may take: an upload that may become a draft
   * (`start=false` is only known once its body is read) needs at least 1 MB of it free.
   */
  draftMB?: number;
  /** Data rows of each sheet: at most as many events; `complete` false when counting stopped early. */
  rows?: { total: number; complete: boolean }[];
};

/**
 * `fits`: within the limit. `refused`: the upload or start is refused (403 quota_exceeded), nothing
 * taken. `stops`: the import starts and stops at the limit, the events before it stored.
 */
type Consequence = 'fits' | 'refused' | 'stops';

type QuotaVerdict = {
  quota: QuotaName;
  needed: number;
  limit: QuotaLimit;
  /** Before this import (null: unlimited). */
  remaining: number | null;
  consequence: Consequence;
  message: string;
};

export type ImportAllowance = { allowed: boolean; verdicts: QuotaVerdict[] };

const n = (value: number) => value.toLocaleString('en');
const MB = 1024 * 1024;
const megabytes = (bytes: number) =>
  bytes < MB / 10 ? `${n(Math.ceil(bytes / 1024))} KB` : `${n(Math.round((bytes / MB) * 10) / 10)} MB`;
const RAISE = 'ask an administrator to raise your trust level';

function rowsText(rows: { total: number; complete: boolean }): string {
  return rows.complete ? `${n(rows.total)} rows` : `at least ${n(rows.total)} rows`;
}

/** The verdicts on each quota the request touches, in the order a person reads them. */
export function importAllowance(standings: QuotaStanding[], request: ImportRequest): ImportAllowance {
  const of = (quota: QuotaName) =>
    standings.find((s) => s.quota === quota) ?? { quota, used: 0, limit: null };
  const verdicts: QuotaVerdict[] = [];
  const daily = (quota: QuotaName, needed: number, what: string) => {
    const { used, limit } = of(quota);
    const remaining = limit === null ? null : Math.max(0, limit - used);
    const fits = fitsQuota(used, needed, limit);
    verdicts.push({
      quota,
      needed,
      limit,
      remaining,
      consequence: fits ? 'fits' : 'refused',
      message:
        limit === null
          ? `${what}: no daily limit at your level`
          : fits
            ? `${what}: this takes ${n(needed)}, ${n((remaining ?? 0) - needed)} of ${n(limit)} left today after it`
            : `${what}: this needs ${n(needed)}, you have ${n(remaining ?? 0)} of ${n(limit)} left today: ` +
              `wait until midnight UTC or ${RAISE}`,
    });
  };
  if (request.upload) daily('fileUploadsPerDay', 1, 'Uploads');
  if (request.sheets > 0) daily('importJobsPerDay', request.sheets, 'Import jobs');
  if (request.draftMB !== undefined) {
    const { used, limit } = of('draftStorageMB');
    const remaining = limit === null ? null : Math.max(0, limit - used);
    const fits = fitsQuota(used, request.draftMB, limit);
    verdicts.push({
      quota: 'draftStorageMB',
      needed: request.draftMB,
      limit,
      remaining,
      consequence: fits ? 'fits' : 'refused',
      message:
        limit === null
          ? 'Drafts: no limit on stored drafts at your level'
          : fits
            ? `Drafts: ${n(remaining ?? 0)} of ${n(limit)} MB of stored drafts left`
            : `Drafts: your uploads waiting as drafts take ${n(used)} of your ${n(limit)} MB: start them, or ` +
              `wait until they expire (24 hours after upload), or ${RAISE}`,
    });
  }

  if (request.sizeBytes !== undefined) {
    const { limit } = of('maxFileSizeMB');
    const fits = limit === null || request.sizeBytes <= limit * MB;
    verdicts.push({
      quota: 'maxFileSizeMB',
      needed: request.sizeBytes,
      limit,
      remaining: limit,
      consequence: fits ? 'fits' : 'refused',
      message:
        limit === null
          ? `${megabytes(request.sizeBytes)}: no file size limit at your level`
          : fits
            ? `${megabytes(request.sizeBytes)}: within your ${n(limit)} MB per file`
            : `this file is ${megabytes(request.sizeBytes)}; your level allows ${n(limit)} MB per file: ` +
              `split the file or ${RAISE}`,
    });
  }

  if (request.rows?.length) {
    // Each sheet is one import (eventsPerImport applies to each); all of them draw on totalEvents.
    const largest = request.rows.reduce((a, b) => (b.total > a.total ? b : a));
    const perImport = of('eventsPerImport').limit;
    const fitsOne = perImport === null || largest.total <= perImport;
    verdicts.push({
      quota: 'eventsPerImport',
      needed: largest.total,
      limit: perImport,
      remaining: perImport,
      consequence: fitsOne ? 'fits' : 'stops',
      message:
        perImport === null
          ? `${rowsText(largest)}: no limit per import at your level`
          : fitsOne
            ? `${rowsText(largest)}: within your ${n(perImport)} per import`
            : `this file has ${rowsText(largest)}; your level allows ${n(perImport)} per import, so the import ` +
              `would stop after ${n(perImport)} events: split the file or ${RAISE}`,
    });
    const total = request.rows.reduce((sum, sheet) => sum + sheet.total, 0);
    const complete = request.rows.every((sheet) => sheet.complete);
    const { used, limit } = of('totalEvents');
    const remaining = limit === null ? null : Math.max(0, limit - used);
    const fits = fitsQuota(used, total, limit);
    verdicts.push({
      quota: 'totalEvents',
      needed: total,
      limit,
      remaining,
      consequence: fits ? 'fits' : 'stops',
      message:
        limit === null
          ? `${rowsText({ total, complete })}: no limit on your events at your level`
          : fits
            ? `${complete ? '' : 'at most '}${n((remaining ?? 0) - total)} of ${n(limit)} events left after it`
            : `this file has ${rowsText({ total, complete })}; you have ${n(remaining ?? 0)} of your ${n(limit)} ` +
              `events left, so the import would stop after ${n(remaining ?? 0)}: ${RAISE}`,
    });
  }
  return { allowed: verdicts.every((v) => v.consequence !== 'refused'), verdicts };
}

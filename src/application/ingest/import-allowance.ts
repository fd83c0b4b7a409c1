import { QuotaExceededError } from '../../domain/accounts/quotas.ts';
import {
  type ImportAllowance,
  importAllowance,
  type ImportRequest,
} from '../../domain/ingest/import-allowance.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';

// May this caller upload or import this now, and what remains: the one place that decides it before
// the work (the upload route before it reads a body, the import wizard's Validate and Start). The
// quotas are taken later, atomically, when the file is recorded (create-ingest-file.ts); this only
// says beforehand what that will meet.

const MB = 1024 * 1024;

type AllowanceDeps = {
  quotas: Pick<Quotas, 'status'>;
  /** The service's own ceiling on a file (INGEST_MAX_FILE_SIZE_MB). */
  maxFileSizeBytes: number;
};

export type CallerAllowance = ImportAllowance & {
  /** The largest file the caller may send: the service's ceiling or the trust level's, the smaller. */
  maxFileBytes: number;
};

async function allowanceWithStatus(deps: AllowanceDeps, userId: number, request: ImportRequest) {
  const status = await deps.quotas.status(userId);
  const perFile = status.find((s) => s.quota === 'maxFileSizeMB')?.limit ?? null;
  const allowance: CallerAllowance = {
    ...importAllowance(status, request),
    maxFileBytes: perFile === null ? deps.maxFileSizeBytes : Math.min(deps.maxFileSizeBytes, perFile * MB),
  };
  return { allowance, status };
}

export async function callerAllowance(
  deps: AllowanceDeps,
  userId: number,
  request: ImportRequest,
): Promise<CallerAllowance> {
  return (await allowanceWithStatus(deps, userId, request)).allowance;
}

/**
 * The same decision as a refusal: the QuotaExceededError (403 quota_exceeded) of the first quota
 * that refuses the request, else the caller's allowance.
 */
export async function assertImportAllowed(
  deps: AllowanceDeps,
  userId: number,
  request: ImportRequest,
): Promise<CallerAllowance> {
  const { allowance, status } = await allowanceWithStatus(deps, userId, request);
  const refused = allowance.verdicts.find((verdict) => verdict.consequence === 'refused');
  if (refused) {
    const standing = status.find((s) => s.quota === refused.quota);
    throw new QuotaExceededError(refused.quota, {
      limit: refused.limit ?? 0,
      used: standing?.used ?? 0,
      resetsAt: standing?.resetTime ?? null,
      description: standing?.description ?? refused.quota,
    });
  }
  return allowance;
}

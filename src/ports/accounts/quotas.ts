import type { QuotaAmount, QuotaLimit, QuotaName } from '../../domain/accounts/quotas.ts';

export type QuotaStatus = {
  quota: QuotaName;
  used: number;
  /** null: unlimited. */
  limit: QuotaLimit;
  remaining: number | null;
  /** When daily usage resets (next midnight UTC); null for quotas that never reset. */
  resetTime: Date | null;
  description: string;
};

/**
 * The one quota seam every writer asks (uploads, scheduled imports, scrapers, events): limits from
 * config/quotas.yaml by the user's current trust level, usage stored per user, quota and period.
 * The decision itself is the domain's (decideQuotaTake in src/domain/accounts/quotas.ts).
 */
export interface Quotas {
  /**
   * Takes every amount or none, atomically under any concurrency: throws the QuotaExceededError of
   * the first quota that does not fit, and then nothing was taken. perItem quotas (eventsPerImport,
   * maxFileSizeMB) are only compared with their ceiling.
   */
  take(userId: number, amounts: QuotaAmount[]): Promise<void>;
  /** Gives usage back (never below zero): a schedule disabled, a repo deleted, work that did not happen. */
  give(userId: number, amounts: QuotaAmount[]): Promise<void>;
  /** Throws as `take` would, without taking: a refusal before any work (or any byte of a body) is done. */
  check(userId: number, amounts: QuotaAmount[]): Promise<void>;
  /** The user's limit of each quota (null: unlimited). */
  limits(userId: number): Promise<Record<QuotaName, QuotaLimit>>;
  status(userId: number): Promise<QuotaStatus[]>;
}

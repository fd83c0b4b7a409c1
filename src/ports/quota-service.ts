import type { QuotaName } from '../domain/quotas.ts';

export type QuotaStatus = {
  quota: QuotaName;
  used: number;
  /** null: unlimited. */
  limit: number | null;
  remaining: number | null;
  /** When daily usage resets (next midnight UTC); null for quotas that never reset. */
  resetTime: Date | null;
  description: string;
};

/**
 * The quota checks other areas call (ingestion, schedules, scrapers). `consume` takes usage
 * atomically and throws a QuotaExceededError (403, code QUOTA_EXCEEDED) when it would go over.
 */
export interface QuotaService {
  consume(userId: number, quota: QuotaName, amount?: number): Promise<QuotaStatus>;
  /** Gives back usage of a `total` quota (a schedule disabled, a repo deleted). */
  release(userId: number, quota: QuotaName, amount?: number): Promise<void>;
  /** For perItem quotas (eventsPerImport, maxFileSizeMB): throws when `amount` is above the ceiling. */
  check(userId: number, quota: QuotaName, amount: number): Promise<void>;
  status(userId: number): Promise<QuotaStatus[]>;
}

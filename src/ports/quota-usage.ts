/** Stored quota usage; `take` is one atomic statement, safe under any concurrency. */
export interface QuotaUsageStore {
  /**
   * Adds `amount` to the usage of (user, quota, period) unless that would exceed `limit`
   * (null: no limit). Returns the usage after the change, or null when refused.
   */
  take(
    userId: number,
    quota: string,
    period: string,
    amount: number,
    limit: number | null,
  ): Promise<number | null>;
  /** Subtracts up to `amount` (never below zero). */
  give(userId: number, quota: string, period: string, amount: number): Promise<void>;
  /** Usage by quota name for the given periods (missing quotas have used nothing). */
  read(userId: number, periods: { quota: string; period: string }[]): Promise<Map<string, number>>;
}

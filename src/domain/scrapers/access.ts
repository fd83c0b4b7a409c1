import type { Role } from '../users.ts';

// How much scrapers may be used (spec: Limits). Who may use them is decided in domain/access.ts
// (hasScraperAccess, canManageScraperRepo).

export type Actor = { id: number; role: Role; trustLevel: number };

export type ScraperQuota = 'scraperRepos' | 'scraperRunsPerDay';

const LIMITS: Record<ScraperQuota, Record<3 | 4, number>> = {
  scraperRepos: { 3: 3, 4: 10 },
  scraperRunsPerDay: { 3: 10, 4: 50 },
};

/** The limit for this actor: a number, `null` when unlimited, or 0 without scraper access. */
export function scraperQuotaLimit(actor: Actor, quota: ScraperQuota): number | null {
  if (actor.role === 'admin' || actor.trustLevel >= 5) return null;
  if (actor.trustLevel === 4 || actor.trustLevel === 3) return LIMITS[quota][actor.trustLevel];
  return 0;
}

/** Daily quotas reset at midnight UTC. */
export function nextQuotaReset(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

export function quotaDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

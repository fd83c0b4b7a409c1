import type { Role } from '../users.ts';

// Who may use scrapers, and how much (spec, Authentication 4 and Limits): levels 0-2 no access,
// 3 and 4 with quotas, 5 and admins without limits.

export type Actor = { id: number; role: Role; trustLevel: number };

export type ScraperQuota = 'scraperRepos' | 'scraperRunsPerDay';

const LIMITS: Record<ScraperQuota, Record<3 | 4, number>> = {
  scraperRepos: { 3: 3, 4: 10 },
  scraperRunsPerDay: { 3: 10, 4: 50 },
};

export function hasScraperAccess(actor: Actor): boolean {
  return actor.role === 'admin' || actor.trustLevel >= 3;
}

/** The limit for this actor: a number, `null` when unlimited, or 0 without scraper access. */
export function scraperQuotaLimit(actor: Actor, quota: ScraperQuota): number | null {
  if (actor.role === 'admin' || actor.trustLevel >= 5) return null;
  if (actor.trustLevel === 4 || actor.trustLevel === 3) return LIMITS[quota][actor.trustLevel];
  return 0;
}

/** Owner (with scraper access) or admin: may sync, run, change the webhook of, and delete a repo's scrapers. */
export function canManageRepo(actor: Actor, repo: { createdBy: number | null }): boolean {
  if (actor.role === 'admin') return true;
  return hasScraperAccess(actor) && repo.createdBy !== null && repo.createdBy === actor.id;
}

/** Daily quotas reset at midnight UTC. */
export function nextQuotaReset(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

export function quotaDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

import type { Role } from '../users.ts';

// Who may use scrapers (spec, Authentication 4): levels 0-2 no access, 3 and up and admins may.
// How much is the quotas' (scraperRepos, scraperRunsPerDay in config/quotas.yaml).

export type Actor = { id: number; role: Role; trustLevel: number };

export function hasScraperAccess(actor: Actor): boolean {
  return actor.role === 'admin' || actor.trustLevel >= 3;
}

/** Owner (with scraper access) or admin: may sync, run, change the webhook of, and delete a repo's scrapers. */
export function canManageRepo(actor: Actor, repo: { createdBy: number | null }): boolean {
  if (actor.role === 'admin') return true;
  return hasScraperAccess(actor) && repo.createdBy !== null && repo.createdBy === actor.id;
}

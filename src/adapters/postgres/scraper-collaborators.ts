import { Type } from 'typebox';
import { type Actor, nextQuotaReset, quotaDay, scraperQuotaLimit } from '../../domain/scrapers/access.ts';
import type { ActorDirectory, QuotaGate } from '../../ports/scraper-collaborators.ts';
import { type DatabasePool, row, sql } from './database.ts';

/** Role and trust level straight from the `users` table. */
export function postgresActorDirectory(pool: DatabasePool): ActorDirectory {
  return {
    async find(userId) {
      const found = await pool.maybeOne(
        sql.type(
          row(
            Type.Object({
              id: Type.Number(),
              role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
              trust_level: Type.Number(),
            }),
          ),
        )`select id, role, trust_level from users where id = ${userId}`,
      );
      return found ? { id: found.id, role: found.role, trustLevel: found.trust_level } : null;
    },
  };
}

/**
 * The scraper quotas, counted on the scraper tables: repos owned (a lifetime count) and runs per UTC
 * day (a usage row taken with a conditional upsert, so two workers cannot both take the last run).
 * The accounts work brings a general quota store; this adapter is then replaced by one over it.
 */
export function postgresScraperQuotaGate(pool: DatabasePool, now: () => Date = () => new Date()): QuotaGate {
  const used = async (actor: Actor, quota: 'scraperRepos' | 'scraperRunsPerDay'): Promise<number> => {
    if (quota === 'scraperRepos') {
      return pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
        select count(*)::int as count from scraper_repos where created_by = ${actor.id}`);
    }
    const value = await pool.maybeOneFirst(sql.type(row(Type.Object({ used: Type.Number() })))`
      select used from scraper_quota_usage
      where user_id = ${actor.id} and quota = ${quota} and day = ${quotaDay(now())}::date`);
    return value ?? 0;
  };
  const resetsAt = (quota: 'scraperRepos' | 'scraperRunsPerDay') =>
    quota === 'scraperRunsPerDay' ? nextQuotaReset(now()) : null;

  return {
    async check(actor, quota, amount) {
      const limit = scraperQuotaLimit(actor, quota);
      if (limit === null) return { ok: true };
      const current = await used(actor, quota);
      return current + amount <= limit
        ? { ok: true }
        : { ok: false, limit, used: current, resetsAt: resetsAt(quota) };
    },

    async consume(actor, quota, amount) {
      const limit = scraperQuotaLimit(actor, quota);
      if (quota === 'scraperRepos') {
        // Counted from the repos themselves; the insert that follows is what uses it.
        if (limit === null) return { ok: true };
        const current = await used(actor, quota);
        return current + amount <= limit ? { ok: true } : { ok: false, limit, used: current, resetsAt: null };
      }
      const day = quotaDay(now());
      const taken = await pool.maybeOneFirst(sql.type(row(Type.Object({ used: Type.Number() })))`
        insert into scraper_quota_usage as u (user_id, quota, day, used)
        select ${actor.id}::bigint, ${quota}::text, ${day}::date, ${amount}::int
        where ${limit === null}::boolean or ${amount}::int <= ${limit ?? 0}::int
        on conflict (user_id, quota, day) do update set used = u.used + excluded.used
          where ${limit === null}::boolean or u.used + excluded.used <= ${limit ?? 0}::int
        returning used`);
      if (taken !== null) return { ok: true };
      return { ok: false, limit: limit ?? 0, used: await used(actor, quota), resetsAt: resetsAt(quota) };
    },
  };
}

import { QuotaExceededError } from '../../domain/quotas.ts';
import type { Actor, ScraperQuota } from '../../domain/scrapers/access.ts';
import type { QuotaDecision, QuotaGate } from '../../ports/scraper-collaborators.ts';
import type { QuotaService } from '../../ports/quota-service.ts';
import type { ScraperRepoStore } from '../../ports/scraper-stores.ts';

// The scraper quotas over the accounts QuotaService, so limits come from config/quotas.yaml and
// daily runs show up in the user's quota status with the other quotas. Repos owned are counted on
// the repos themselves rather than taken and released: a repo insert that fails after the check
// (a taken slug) then cannot leak a repo from the quota, and there is no delete path to release it.

export function accountsScraperQuotaGate(
  quotas: QuotaService,
  repos: Pick<ScraperRepoStore, 'countOwnedBy'>,
): QuotaGate {
  const current = async (actor: Actor, quota: ScraperQuota) => {
    const status = (await quotas.status(actor.id)).find((s) => s.quota === quota);
    if (!status) throw new Error(`the quota ${quota} is missing from the quota service`);
    const used = quota === 'scraperRepos' ? await repos.countOwnedBy(actor.id) : status.used;
    return { used, limit: status.limit, resetsAt: status.resetTime };
  };
  const decide = async (actor: Actor, quota: ScraperQuota, amount: number): Promise<QuotaDecision> => {
    const { used, limit, resetsAt } = await current(actor, quota);
    return limit === null || used + amount <= limit ? { ok: true } : { ok: false, limit, used, resetsAt };
  };
  return {
    check: decide,
    async consume(actor, quota, amount) {
      // The repo insert that follows is what uses the repos quota.
      if (quota === 'scraperRepos') return decide(actor, quota, amount);
      try {
        await quotas.consume(actor.id, quota, amount);
        return { ok: true };
      } catch (error) {
        if (!(error instanceof QuotaExceededError)) throw error;
        const { used, limit, resetsAt } = await current(actor, quota);
        return { ok: false, limit: limit ?? 0, used, resetsAt };
      }
    },
  };
}

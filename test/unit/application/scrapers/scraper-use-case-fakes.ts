import { cronerSchedule } from '../../../../src/adapters/jobs/croner-schedule.ts';
import { webhookTokens } from '../../../../src/adapters/security/webhook-tokens.ts';
import type { Actor } from '../../../../src/domain/scrapers/access.ts';
import type { ScraperJobQueue } from '../../../../src/ports/scrapers/scraper-job-queue.ts';
import { memoryScraperStores } from '../../../fakes/scrapers/scraper-stores.ts';
import { declared } from '../../../contracts/scrapers/scraper-store-harness.ts';
import { fakeQuotas } from '../../../helpers/quotas.ts';

// The scraper use cases' collaborators for the fast tier: the shared in-memory stores, the real
// token and cron adapters (pure), and minimal fakes of the ports that have no shared fake yet (the
// job queue records what was queued; the flag and the actors are values).

export const OWNER: Actor = { id: 5, role: 'user', trustLevel: 3 };
export const STRANGER: Actor = { id: 6, role: 'user', trustLevel: 3 };
export const ADMIN: Actor = { id: 7, role: 'admin', trustLevel: 0 };

/** A job queue that records the syncs and executions asked for. */
function recordingJobQueue(): ScraperJobQueue & { syncs: number[]; executions: number[] } {
  const syncs: number[] = [];
  const executions: number[] = [];
  return {
    syncs,
    executions,
    async enqueueSync(repoId) {
      syncs.push(repoId);
      return { jobId: `sync-${repoId}` };
    },
    async enqueueExecution(runId) {
      executions.push(runId);
      return { jobId: `run-${runId}` };
    },
    async enqueueSyncLater(repoId) {
      syncs.push(repoId);
    },
  };
}

export function scraperUseCaseDeps(options: { enableScrapers?: boolean; now?: Date } = {}) {
  const stores = memoryScraperStores({ now: () => clock.now() });
  const clock = { at: options.now ?? new Date('2026-01-01T00:00:00Z'), now: () => new Date(clock.at) };
  const actors = new Map([OWNER, STRANGER, ADMIN].map((actor) => [actor.id, actor]));
  let runs = 0;
  return {
    ...stores,
    jobs: recordingJobQueue(),
    flags: { isEnabled: async () => options.enableScrapers ?? true },
    quotas: fakeQuotas(),
    actors: { find: async (id: number) => actors.get(id) ?? null },
    tokens: webhookTokens,
    cron: cronerSchedule,
    runIds: { next: () => `00000000-0000-4000-8000-${String(++runs).padStart(12, '0')}` },
    clock,
  };
}

/** A synced repo of OWNER's with one scraper (settings as given in the manifest). */
export async function ownedScraper(
  deps: ReturnType<typeof scraperUseCaseDeps>,
  manifest: Parameters<typeof declared>[1] = {},
) {
  const repo = await deps.repos.create({
    name: 'Repo',
    slug: 'repo',
    catalogId: null,
    createdBy: OWNER.id,
    sourceType: 'upload',
    code: { 'main.py': 'print(1)' },
  });
  await deps.scrapers.reconcile(repo.id, [declared('s', manifest)]);
  const [scraper] = await deps.scrapers.listByRepo(repo.id);
  if (!scraper) throw new Error('the scraper was not created');
  return { repo, scraper };
}

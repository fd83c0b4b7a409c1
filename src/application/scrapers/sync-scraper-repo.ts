import { ManifestUnreadableError } from '../../domain/scrapers/errors.ts';
import { describeProblems, validateManifest } from '../../domain/scrapers/manifest.ts';
import type { ReconcileResult } from '../../ports/scrapers/scraper-store.ts';
import type { ScraperDeps } from './scraper-deps.ts';

/** How long a sync waits before trying again to delete a scraper that was running. */
const RESYNC_AFTER_RUNNING_SECS = 60;

type SyncOutcome =
  { status: 'synced'; result: ReconcileResult } | { status: 'failed'; error: string } | { status: 'missing' };

/**
 * `scraper-repo-sync-job`: reads the manifest, validates it, and reconciles the scraper records
 * by slug. An invalid manifest changes nothing and lists every problem in `lastSyncError`.
 */
export async function syncScraperRepo(
  deps: Pick<ScraperDeps, 'repos' | 'scrapers' | 'manifests' | 'jobs' | 'cron'>,
  repoId: number,
): Promise<SyncOutcome> {
  const repo = await deps.repos.get(repoId);
  if (!repo) return { status: 'missing' };
  await deps.repos.setSyncStatus(repoId, 'syncing');
  let document: unknown;
  try {
    document = await deps.manifests.load(repo);
  } catch (error) {
    if (!(error instanceof ManifestUnreadableError)) {
      await deps.repos.setSyncStatus(repoId, 'failed', 'the manifest could not be read (internal error)');
      throw error;
    }
    await deps.repos.setSyncStatus(repoId, 'failed', error.message);
    return { status: 'failed', error: error.message };
  }
  const manifest = validateManifest(document, (expression) => deps.cron.problem(expression));
  if (!manifest.ok) {
    const error = describeProblems(manifest.problems);
    await deps.repos.setSyncStatus(repoId, 'failed', error);
    return { status: 'failed', error };
  }
  const result = await deps.scrapers.reconcile(repoId, manifest.scrapers);
  await deps.repos.setSyncStatus(repoId, 'synced', null);
  if (result.keptWhileRunning.length > 0) await deps.jobs.enqueueSyncLater(repoId, RESYNC_AFTER_RUNNING_SECS);
  return { status: 'synced', result };
}

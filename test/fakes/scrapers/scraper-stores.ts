import { DomainError } from '../../../src/domain/errors.ts';
import type { ScraperRepo } from '../../../src/domain/scrapers/repos.ts';
import type { RunStatistics } from '../../../src/domain/scrapers/runs.ts';
import type { Scraper, ScraperRun } from '../../../src/domain/scrapers/scrapers.ts';
import type { Clock } from '../../../src/ports/clock.ts';
import type { ScraperRepoStore } from '../../../src/ports/scrapers/scraper-repo-store.ts';
import type { ScraperRunStore } from '../../../src/ports/scrapers/scraper-run-store.ts';
import type { ScraperStore } from '../../../src/ports/scrapers/scraper-store.ts';

/** A scraper's statistics before its first run. */
export const NO_RUN_STATISTICS: RunStatistics = {
  totalRuns: 0,
  successRuns: 0,
  failedRuns: 0,
  lastRunAt: null,
  lastRunStatus: null,
  lastRunDurationMs: null,
};

/** A new scraper's settings of the record (what a sync leaves alone) and statistics. */
export const NEW_SCRAPER = {
  enabled: true,
  envVars: {},
  targetDatasetId: null,
  autoImport: false,
  reviewDuplicates: 'first-run',
  webhookEnabled: false,
  statistics: NO_RUN_STATISTICS,
} as const satisfies Partial<Scraper>;

/** What a queued run has not recorded yet: all but its trigger and the time it was queued. */
export const NOT_STARTED = {
  startedAt: null,
  finishedAt: null,
  durationMs: null,
  exitCode: null,
  stdout: null,
  stderr: null,
  error: null,
  errorCode: null,
  outputRows: null,
  outputBytes: null,
  resultFile: null,
  ingestFileId: null,
} as const;

/** The three scraper store ports over one shared state, as the Postgres adapters share tables. */
export type MemoryScraperStores = {
  repos: ScraperRepoStore;
  scrapers: ScraperStore;
  runs: ScraperRunStore;
  /**
   * The ingestion side that hasCompletedImport reads (ingest_jobs in Postgres): an ingest file whose
   * job into `datasetId` reached `completed` or not. Returns the ingest file's id.
   */
  addImport(datasetId: number, completed: boolean): number;
};

/**
 * The ScraperRepoStore, ScraperStore and ScraperRunStore ports in memory, with the semantics of
 * postgresScraperRepoStore, postgresScraperStore and postgresScraperRunStore (all pass
 * test/contracts/scrapers/scraper-stores.ts): a taken repo slug is a DUPLICATE conflict, deleting
 * a repo deletes its scrapers and their runs, a scheduled due time gets one run, a run moves only
 * from the status it is in, and the scraper's statistics follow its runs. Times come from `clock`.
 * Each method reads and writes with no await in between (the atomicity of Postgres' transactions).
 */
export function memoryScraperStores(clock: Clock = { now: () => new Date() }): MemoryScraperStores {
  const repos = new Map<number, ScraperRepo>();
  const scrapers = new Map<number, Scraper & { webhookTokenHash: string | null }>();
  const runs = new Map<number, ScraperRun & { startOrder: number }>();
  const imports = new Map<number, { datasetId: number; completed: boolean }>();
  const ids = { repo: 0, scraper: 0, run: 0, file: 0, start: 0 };
  const now = () => clock.now().toISOString();

  const repoOf = (id: number) => {
    const repo = repos.get(id);
    if (!repo) throw new Error(`scraper repo ${id} does not exist`);
    return repo;
  };
  const scraperOf = (id: number) => {
    const scraper = scrapers.get(id);
    if (!scraper) throw new Error(`scraper ${id} does not exist`);
    return scraper;
  };
  const runsOf = (scraperId: number) => [...runs.values()].filter((run) => run.scraperId === scraperId);
  const running = (scraper: Scraper) =>
    scraper.statistics.lastRunStatus === 'running' || runsOf(scraper.id).some((r) => r.status === 'running');
  const deleteScraper = (id: number) => {
    for (const run of runsOf(id)) runs.delete(run.id);
    scrapers.delete(id);
  };
  const copyScraper = ({ webhookTokenHash: _hash, ...scraper }: Scraper & { webhookTokenHash: unknown }) =>
    structuredClone(scraper);
  const copyRun = ({ startOrder: _order, ...run }: ScraperRun & { startOrder: number }) => ({ ...run });

  const repoStore: ScraperRepoStore = {
    async create(repo) {
      if ([...repos.values()].some((other) => other.slug === repo.slug)) {
        throw new DomainError('conflict', 'A document with this value already exists', { code: 'DUPLICATE' });
      }
      ids.repo += 1;
      const created: ScraperRepo = {
        id: ids.repo,
        name: repo.name,
        slug: repo.slug,
        sourceType: repo.sourceType,
        gitUrl: repo.sourceType === 'git' ? repo.gitUrl : null,
        gitBranch: repo.sourceType === 'git' ? repo.gitBranch : null,
        code: repo.sourceType === 'upload' ? { ...repo.code } : null,
        catalogId: repo.catalogId,
        createdBy: repo.createdBy,
        syncStatus: 'pending',
        lastSyncAt: null,
        lastSyncError: null,
      };
      repos.set(created.id, created);
      return structuredClone(created);
    },
    async get(id) {
      const repo = repos.get(id);
      return repo ? structuredClone(repo) : null;
    },
    async updateSource(id, source, resync) {
      const repo = repoOf(id);
      repo.sourceType = source.sourceType;
      repo.gitUrl = source.sourceType === 'git' ? source.gitUrl : null;
      repo.gitBranch = source.sourceType === 'git' ? source.gitBranch : null;
      repo.code = source.sourceType === 'upload' ? { ...source.code } : null;
      if (resync) repo.syncStatus = 'pending';
      return structuredClone(repo);
    },
    async requestSync(id) {
      const repo = repos.get(id);
      if (repo) repo.syncStatus = 'pending';
    },
    async setSyncStatus(id, status, error = null) {
      const repo = repos.get(id);
      if (!repo) return;
      repo.syncStatus = status;
      if (status === 'synced' || status === 'failed') {
        repo.lastSyncAt = now();
        repo.lastSyncError = error;
      }
    },
    async removeUnlessRunning(id) {
      if (!repos.has(id)) return 'missing';
      const own = [...scrapers.values()].filter((scraper) => scraper.repoId === id);
      if (own.some((scraper) => runsOf(scraper.id).some((run) => run.status === 'running'))) return 'running';
      for (const scraper of own) deleteScraper(scraper.id);
      repos.delete(id);
      return 'deleted';
    },
  };

  const scraperStore: ScraperStore = {
    async get(id) {
      const scraper = scrapers.get(id);
      return scraper ? copyScraper(scraper) : null;
    },
    async listByRepo(repoId) {
      return [...scrapers.values()]
        .filter((scraper) => scraper.repoId === repoId)
        .sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0))
        .map(copyScraper);
    },
    async reconcile(repoId, declared) {
      repoOf(repoId);
      const created: string[] = [];
      const updated: string[] = [];
      const own = () => [...scrapers.values()].filter((scraper) => scraper.repoId === repoId);
      for (const scraper of declared) {
        const existing = own().find((other) => other.slug === scraper.slug);
        const { name, runtime, entrypoint, outputFile, schedule, timeoutSecs, memoryMb } = scraper;
        if (existing) {
          // A new schedule starts now: due times of the old one are not run.
          if (existing.schedule !== schedule) existing.scheduleSince = now();
          Object.assign(existing, { name, runtime, entrypoint, outputFile, schedule, timeoutSecs, memoryMb });
          updated.push(scraper.slug);
          continue;
        }
        ids.scraper += 1;
        scrapers.set(ids.scraper, {
          ...{ name, slug: scraper.slug, runtime, entrypoint, outputFile, schedule, timeoutSecs, memoryMb },
          id: ids.scraper,
          repoId,
          scheduleSince: now(),
          ...structuredClone(NEW_SCRAPER),
          webhookTokenHash: null,
        });
        created.push(scraper.slug);
      }
      const slugs = new Set(declared.map((scraper) => scraper.slug));
      const gone = own().filter((scraper) => !slugs.has(scraper.slug));
      const kept = gone.filter(running);
      const deleted = gone.filter((scraper) => !running(scraper));
      for (const scraper of deleted) deleteScraper(scraper.id);
      // No longer declared: never scheduled again; deleted by the sync that follows the run.
      for (const scraper of kept) scraper.schedule = null;
      const slugsOf = (list: Scraper[]) => list.map((scraper) => scraper.slug);
      return { created, updated, deleted: slugsOf(deleted), keptWhileRunning: slugsOf(kept) };
    },
    async listSchedulable() {
      return [...scrapers.values()]
        .filter(
          (scraper) =>
            scraper.enabled &&
            scraper.schedule !== null &&
            scraper.statistics.lastRunStatus !== 'running' &&
            !runsOf(scraper.id).some((run) => run.status === 'queued' || run.status === 'running'),
        )
        .sort((a, b) => a.id - b.id)
        .map((scraper) => {
          const due = runsOf(scraper.id).flatMap((run) => (run.scheduledFor ? [run.scheduledFor] : []));
          const lastScheduledFor = due.length === 0 ? null : due.reduce((a, b) => (a > b ? a : b));
          return { ...copyScraper(scraper), lastScheduledFor };
        });
    },
    async setWebhook(id, enabled, tokenHash) {
      const scraper = scrapers.get(id);
      if (!scraper) return;
      if (
        tokenHash !== null &&
        [...scrapers.values()].some((s) => s.id !== id && s.webhookTokenHash === tokenHash)
      ) {
        throw new Error('the webhook token hash belongs to another scraper');
      }
      scraper.webhookEnabled = enabled;
      scraper.webhookTokenHash = tokenHash;
    },
    async findByWebhookHash(tokenHash) {
      const found = [...scrapers.values()].find((scraper) => scraper.webhookTokenHash === tokenHash);
      return found ? copyScraper(found) : null;
    },
    async update(id, changes) {
      const scraper = scrapers.get(id);
      if (!scraper) return;
      for (const [key, value] of Object.entries(changes)) {
        if (value !== undefined) Object.assign(scraper, { [key]: structuredClone(value) });
      }
    },
  };

  const runStore: ScraperRunStore = {
    async createQueued(run) {
      scraperOf(run.scraperId);
      const scheduledFor = run.scheduledFor ? run.scheduledFor.toISOString() : null;
      if (
        scheduledFor !== null &&
        runsOf(run.scraperId).some((other) => other.scheduledFor === scheduledFor)
      ) {
        return null;
      }
      ids.run += 1;
      const created = {
        id: ids.run,
        runId: run.runId,
        scraperId: run.scraperId,
        status: 'queued' as const,
        triggeredBy: run.triggeredBy,
        triggeredByUser: run.triggeredByUser,
        scheduledFor,
        queuedAt: now(),
        ...NOT_STARTED,
        startOrder: 0,
      };
      runs.set(created.id, created);
      return copyRun(created);
    },
    async get(id) {
      const run = runs.get(id);
      return run ? copyRun(run) : null;
    },
    async start(id) {
      const run = runs.get(id);
      if (!run || run.status !== 'queued') return false;
      const at = now();
      ids.start += 1;
      Object.assign(run, { status: 'running', startedAt: at, startOrder: ids.start });
      Object.assign(scraperOf(run.scraperId).statistics, { lastRunStatus: 'running', lastRunAt: at });
      return true;
    },
    async finish(id, from, outcome) {
      const run = runs.get(id);
      if (!run || run.status !== from) return false;
      const at = now();
      Object.assign(run, { ...outcome, finishedAt: at });
      const statistics = scraperOf(run.scraperId).statistics;
      const succeeded = outcome.status === 'success';
      statistics.totalRuns += 1;
      statistics.successRuns += succeeded ? 1 : 0;
      statistics.failedRuns += succeeded ? 0 : 1;
      statistics.lastRunAt = at;
      statistics.lastRunStatus = outcome.status;
      statistics.lastRunDurationMs = outcome.durationMs;
      return true;
    },
    async recordImport(id, result) {
      const run = runs.get(id);
      if (!run) return;
      if ('ingestFileId' in result)
        Object.assign(run, { ingestFileId: result.ingestFileId, resultFile: null });
      else
        Object.assign(run, {
          error: result.error,
          errorCode: 'IMPORT_FAILED',
          resultFile: result.resultFile,
        });
    },
    async hasCompletedImport(scraperId, datasetId) {
      return runsOf(scraperId).some((run) => {
        const found = run.ingestFileId === null ? undefined : imports.get(run.ingestFileId);
        return found !== undefined && found.completed && found.datasetId === datasetId;
      });
    },
    async listRunning() {
      return [...runs.values()]
        .filter((run) => run.status === 'running')
        .sort((a, b) => a.startOrder - b.startOrder)
        .map((run) => ({ ...copyRun(run), timeoutSecs: scraperOf(run.scraperId).timeoutSecs }));
    },
  };

  return {
    repos: repoStore,
    scrapers: scraperStore,
    runs: runStore,
    addImport(datasetId, completed) {
      ids.file += 1;
      imports.set(ids.file, { datasetId, completed });
      return ids.file;
    },
  };
}

import type { Test } from 'tap';
import type { TriggeredBy } from '../../../src/domain/scrapers/runs.ts';
import type { ManifestScraper } from '../../../src/domain/scrapers/manifest.ts';
import type { RunOutcome } from '../../../src/domain/scrapers/scrapers.ts';
import type { ScraperRepoStore } from '../../../src/ports/scrapers/scraper-repo-store.ts';
import type { ScraperRunStore } from '../../../src/ports/scrapers/scraper-run-store.ts';
import type { ScraperStore } from '../../../src/ports/scrapers/scraper-store.ts';

// What the cases of test/contracts/scrapers/scraper-stores.ts are given, and the rows they make.

/** The stores, and the rows of other features they refer to (users, catalogs, datasets, imports). */
export type ScraperStoresHarness = {
  repos: ScraperRepoStore;
  scrapers: ScraperStore;
  runs: ScraperRunStore;
  user(): Promise<number>;
  catalog(): Promise<number>;
  dataset(): Promise<number>;
  /** An ingest file with a job into the dataset that completed, or that did not (yet). */
  addImport(datasetId: number, completed: boolean): Promise<number>;
};
export type MakeScraperStores = () => Promise<ScraperStoresHarness>;

let serial = 0;
/** A slug no other case of the run uses. */
export const uniqueSlug = (prefix: string) => `${prefix}-${++serial}`;

export const declared = (slug: string, changes: Partial<ManifestScraper> = {}): ManifestScraper => ({
  name: `Scraper ${slug}`,
  slug,
  runtime: 'python',
  entrypoint: 'main.py',
  outputFile: 'data.csv',
  schedule: null,
  timeoutSecs: 60,
  memoryMb: 128,
  ...changes,
});

export const outcome = (status: RunOutcome['status'], changes: Partial<RunOutcome> = {}): RunOutcome => ({
  status,
  exitCode: status === 'success' ? 0 : 1,
  durationMs: 1234,
  stdout: 'out',
  stderr: 'err',
  error: status === 'success' ? null : 'it broke',
  errorCode: status === 'success' ? null : 'EXIT_NONZERO',
  outputRows: status === 'success' ? 2 : null,
  outputBytes: status === 'success' ? 20 : null,
  resultFile: null,
  ...changes,
});

/** A repo of uploaded code with the given scrapers declared, owned by a new user. */
export async function repoWith(h: ScraperStoresHarness, scrapers: ManifestScraper[]) {
  const owner = await h.user();
  const repo = await h.repos.create({
    name: 'Repo',
    slug: uniqueSlug('repo'),
    catalogId: null,
    createdBy: owner,
    sourceType: 'upload',
    code: { 'main.py': 'print(1)' },
  });
  await h.scrapers.reconcile(repo.id, scrapers);
  const list = await h.scrapers.listByRepo(repo.id);
  return { owner, repo, scrapers: list };
}

export const isIso = (value: string | null | undefined) =>
  typeof value === 'string' && new Date(value).toISOString() === value;

/** A queued run: manual, or scheduled for `due`. */
export const queue = (
  h: ScraperStoresHarness,
  scraperId: number,
  options: { triggeredBy?: TriggeredBy; user?: number | null; due?: string } = {},
) =>
  h.runs.createQueued({
    scraperId,
    runId: crypto.randomUUID(),
    triggeredBy: options.triggeredBy ?? (options.due ? 'schedule' : 'manual'),
    triggeredByUser: options.user ?? null,
    scheduledFor: options.due ? new Date(options.due) : null,
  });

/** A queued run without a due time (never refused). */
export async function queued(h: ScraperStoresHarness, scraperId: number) {
  const run = await queue(h, scraperId);
  if (!run) throw new Error('a manual run is always queued');
  return run;
}

/** What was stored reads back the same, and an id never given reads as null. */
export async function readsBack<T extends { id: number }>(
  t: Test,
  stored: T | null | undefined,
  get: (id: number) => Promise<T | null>,
): Promise<void> {
  t.same(await get(stored?.id ?? 0), stored, 'it reads back as stored');
  t.equal(await get(1_000_000_000), null, 'an unknown id is null');
}

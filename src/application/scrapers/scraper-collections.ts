import { parseReviewDuplicates, type ReviewDuplicates } from '../../domain/ingest/review.ts';
import { parseAlertAfter } from '../../domain/source-health.ts';
import {
  canReadCatalog,
  canReadDataset,
  canWriteCatalog,
  canWriteDataset,
  ForbiddenError,
  requireViewer,
  type Viewer,
  canManageScraperRepo,
} from '../../domain/access.ts';
import type { ScraperCollectionSlug } from '../../domain/collections/collections.ts';
import { DomainError, NotFoundError, ValidationError } from '../../domain/errors.ts';
import type { Actor } from '../../domain/scrapers/access.ts';
import { validateRepoIdentity } from '../../domain/scrapers/repos.ts';
import { parseEnvVars } from '../../domain/scrapers/scrapers.ts';
import type { CollectionRepository, Doc } from '../../ports/collections/collection-repository.ts';
import { findDocument, findDocuments, type ListQuery } from '../collections/collection-documents.ts';
import { cancelScraperRun } from './cancel-scraper-run.ts';
import { createScraperRepo, readSource } from './create-scraper-repo.ts';
import type { ScraperDeps } from './scraper-deps.ts';
import { setScraperWebhook } from './set-scraper-webhook.ts';
import { requireScraperAccess } from './trigger-scraper-run.ts';
import { updateScraperRepoSource } from './update-scraper-repo-source.ts';

// The collections API of scraper-repos, scrapers and scraper-runs (spec: Scraper repo, Scraper,
// Scraper run; access by trust level). Lists and reads go through the generic documents code with
// the owner-or-admin read rule in the query; every write is a scraper use case, so the flag, the
// repos quota and the sync queueing apply the same way as everywhere else.

export type ScraperCollectionDeps = {
  repository: CollectionRepository;
  scrapers: ScraperDeps;
};

/** Uploaded code limits, checked before anything is stored (the HTTP body limit comes first). */
export const CODE_LIMITS = { maxFiles: 200, maxFileNameLength: 255, maxTotalBytes: 512 * 1024 };

/** Spec, Authentication 4: levels 0-2 have no scraper access at all; 401 without a login. */
function scraperActor(viewer: Viewer): Actor {
  const user = requireViewer(viewer);
  requireScraperAccess(user);
  return user;
}

export async function listScraperDocuments(
  deps: ScraperCollectionDeps,
  collection: ScraperCollectionSlug,
  viewer: Viewer,
  query: ListQuery,
) {
  scraperActor(viewer);
  return findDocuments(deps, collection, viewer, query);
}

export async function readScraperDocument(
  deps: ScraperCollectionDeps,
  collection: ScraperCollectionSlug,
  viewer: Viewer,
  id: number,
): Promise<Doc> {
  scraperActor(viewer);
  return findDocument(deps, collection, viewer, id);
}

export type RepoInput = {
  name?: string;
  slug?: string;
  sourceType?: 'git' | 'upload';
  gitUrl?: string;
  gitBranch?: string;
  code?: Record<string, string>;
  catalog?: number | null;
};

/** Fields of the other source type are a mistake, not something to drop silently. */
function checkSourceFields(sourceType: 'git' | 'upload' | undefined, input: RepoInput): void {
  const stray =
    sourceType === 'upload'
      ? ['gitUrl', 'gitBranch'].find((field) => field in input)
      : sourceType === 'git'
        ? 'code' in input
          ? 'code'
          : undefined
        : undefined;
  if (stray) {
    throw new ValidationError(`${stray} does not apply to sourceType "${sourceType}"`, {
      field: stray,
      code: 'INVALID_SOURCE_FIELD',
    });
  }
}

function checkCodeSize(code: unknown): void {
  if (typeof code !== 'object' || code === null) return;
  const entries = Object.entries(code as Record<string, unknown>);
  if (entries.length > CODE_LIMITS.maxFiles) {
    throw new ValidationError(`code may hold at most ${CODE_LIMITS.maxFiles} files`, {
      field: 'code',
      code: 'CODE_TOO_LARGE',
    });
  }
  let total = 0;
  for (const [name, content] of entries) {
    if (name.length > CODE_LIMITS.maxFileNameLength) {
      throw new ValidationError(`file names may be at most ${CODE_LIMITS.maxFileNameLength} characters`, {
        field: 'code',
        code: 'INVALID_PATH',
      });
    }
    total += Buffer.byteLength(name) + (typeof content === 'string' ? Buffer.byteLength(content) : 0);
  }
  if (total > CODE_LIMITS.maxTotalBytes) {
    throw new ValidationError(`code may be at most ${CODE_LIMITS.maxTotalBytes} bytes in all`, {
      field: 'code',
      code: 'CODE_TOO_LARGE',
    });
  }
}

/** A catalog named on a repo: 400 when it is not there for this viewer, 403 when it is read-only. */
async function checkCatalog(deps: ScraperCollectionDeps, viewer: Viewer, id: number | null | undefined) {
  if (id === null || id === undefined) return;
  const facts = await deps.repository.hierarchy('catalogs', id);
  if (!facts || !canReadCatalog(viewer, facts.catalog)) {
    throw new ValidationError(`catalog ${id} does not exist`, {
      field: 'catalog',
      code: 'INVALID_REFERENCE',
    });
  }
  if (!canWriteCatalog(viewer, facts.catalog)) throw new ForbiddenError(`You cannot add to catalog ${id}`);
}

async function checkDataset(deps: ScraperCollectionDeps, viewer: Viewer, id: number | null | undefined) {
  if (id === null || id === undefined) return;
  const facts = await deps.repository.hierarchy('datasets', id);
  if (!facts?.dataset || !canReadDataset(viewer, facts.catalog, facts.dataset)) {
    throw new ValidationError(`dataset ${id} does not exist`, {
      field: 'targetDataset',
      code: 'INVALID_REFERENCE',
    });
  }
  if (!canWriteDataset(viewer, facts.catalog, facts.dataset)) {
    throw new ForbiddenError(`You cannot import into dataset ${id}`);
  }
}

export async function createRepoDocument(
  deps: ScraperCollectionDeps,
  viewer: Viewer,
  input: RepoInput,
): Promise<Doc> {
  const user = requireViewer(viewer);
  checkSourceFields(input.sourceType, input);
  checkCodeSize(input.code);
  await checkCatalog(deps, viewer, input.catalog);
  const repo = await createScraperRepo(deps.scrapers, user, {
    name: input.name,
    slug: input.slug,
    sourceType: input.sourceType,
    gitUrl: input.gitUrl,
    gitBranch: input.gitBranch,
    code: input.code,
    catalogId: input.catalog ?? null,
  });
  return findDocument(deps, 'scraper-repos', viewer, repo.id);
}

/** The repo as the viewer may see it (404 otherwise), and 403 when they may not manage it. */
async function managedRepo(deps: ScraperCollectionDeps, viewer: Viewer, id: number) {
  const actor = scraperActor(viewer);
  await findDocument(deps, 'scraper-repos', viewer, id);
  const repo = await deps.scrapers.repos.get(id);
  if (!repo)
    throw new NotFoundError(`No scraper-repos document with id ${id}`, { code: 'DOCUMENT_NOT_FOUND' });
  if (!canManageScraperRepo(actor, repo))
    throw new ForbiddenError('only the repo owner or an admin may change it');
  return { actor, repo };
}

/**
 * Name, slug and catalog are written as they are; a change of source type, git URL, branch or
 * code goes through updateScraperRepoSource, which queues one sync (rapid edits collapse).
 */
export async function updateRepoDocument(
  deps: ScraperCollectionDeps,
  viewer: Viewer,
  id: number,
  input: RepoInput,
): Promise<{ doc: Doc; syncQueued: boolean }> {
  const { actor, repo } = await managedRepo(deps, viewer, id);
  const sourceType = input.sourceType ?? repo.sourceType;
  checkSourceFields(sourceType, input);
  checkCodeSize(input.code);
  const identity =
    input.name !== undefined || input.slug !== undefined
      ? validateRepoIdentity(input.name ?? repo.name, input.slug ?? repo.slug)
      : {};
  if (input.catalog !== undefined && input.catalog !== repo.catalogId)
    await checkCatalog(deps, viewer, input.catalog);
  const sourceTouched = ['sourceType', 'gitUrl', 'gitBranch', 'code'].some((field) => field in input);
  const source = {
    sourceType,
    gitUrl: input.gitUrl ?? (sourceType === 'git' ? repo.gitUrl : undefined),
    gitBranch: input.gitBranch ?? (sourceType === 'git' ? repo.gitBranch : undefined),
    code: input.code ?? (sourceType === 'upload' ? repo.code : undefined),
  };
  // Everything is checked before anything is written: a refused source leaves the name alone too.
  if (sourceTouched) readSource(source);
  await deps.repository.update('scraper-repos', id, {
    ...identity,
    ...(input.catalog !== undefined ? { catalog: input.catalog } : {}),
  });
  let syncQueued = false;
  if (sourceTouched) ({ syncQueued } = await updateScraperRepoSource(deps.scrapers, actor, id, source));
  return { doc: await findDocument(deps, 'scraper-repos', viewer, id), syncQueued };
}

/**
 * Deleting a repo deletes its scrapers and their runs. While one of its scrapers is running the
 * delete is refused (409 SCRAPER_RUNNING): cancel the run or wait for it, then delete.
 */
export async function deleteRepoDocument(
  deps: ScraperCollectionDeps,
  viewer: Viewer,
  id: number,
): Promise<Doc> {
  const { repo } = await managedRepo(deps, viewer, id);
  const doc = await findDocument(deps, 'scraper-repos', viewer, id);
  const outcome = await deps.scrapers.repos.removeUnlessRunning(id);
  // The owner's scraperRepos unit comes back with the repo.
  if (outcome === 'deleted' && repo.createdBy !== null)
    await deps.scrapers.quotas.give(repo.createdBy, [{ quota: 'scraperRepos', amount: 1 }]);
  if (outcome === 'running') {
    throw new DomainError(
      'conflict',
      'a scraper of this repo is running; cancel the run or wait for it to end',
      {
        code: 'SCRAPER_RUNNING',
      },
    );
  }
  if (outcome === 'missing')
    throw new NotFoundError(`No scraper-repos document with id ${id}`, { code: 'DOCUMENT_NOT_FOUND' });
  return doc;
}

export type ScraperInput = {
  enabled?: boolean;
  envVars?: Record<string, string>;
  targetDataset?: number | null;
  autoImport?: boolean;
  reviewDuplicates?: ReviewDuplicates;
  /** Bad runs in a row that tell the owner (domain/source-health.ts). */
  alertAfter?: unknown;
  webhookEnabled?: boolean;
  rotateWebhookToken?: boolean;
};

/**
 * The fields a user sets on a scraper; the rest comes from the manifest and is overwritten by the
 * next sync. Turning the webhook on (or rotating it) answers the new token once.
 */
export async function updateScraperDocument(
  deps: ScraperCollectionDeps,
  viewer: Viewer,
  id: number,
  input: ScraperInput,
): Promise<{ doc: Doc; webhookToken?: string }> {
  const actor = scraperActor(viewer);
  await findDocument(deps, 'scrapers', viewer, id);
  const scraper = await deps.scrapers.scrapers.get(id);
  const repo = scraper ? await deps.scrapers.repos.get(scraper.repoId) : null;
  if (!scraper || !repo)
    throw new NotFoundError(`No scrapers document with id ${id}`, { code: 'DOCUMENT_NOT_FOUND' });
  if (!canManageScraperRepo(actor, repo))
    throw new ForbiddenError('only the repo owner or an admin may change it');
  if (input.targetDataset !== undefined && input.targetDataset !== scraper.targetDatasetId) {
    await checkDataset(deps, viewer, input.targetDataset);
  }
  const webhookWanted = input.webhookEnabled ?? scraper.webhookEnabled;
  if (input.rotateWebhookToken && !webhookWanted) {
    throw new ValidationError('rotateWebhookToken needs the webhook enabled', {
      field: 'rotateWebhookToken',
    });
  }
  const changes: Parameters<ScraperDeps['scrapers']['update']>[1] = {};
  if (input.enabled !== undefined) changes.enabled = input.enabled;
  if (input.envVars !== undefined) changes.envVars = parseEnvVars(input.envVars);
  if (input.targetDataset !== undefined) changes.targetDatasetId = input.targetDataset;
  if (input.autoImport !== undefined) changes.autoImport = input.autoImport;
  if (input.reviewDuplicates !== undefined)
    changes.reviewDuplicates = parseReviewDuplicates(input.reviewDuplicates);
  if (input.alertAfter !== undefined) changes.alertAfter = parseAlertAfter(input.alertAfter);
  await deps.scrapers.scrapers.update(id, changes);
  let webhookToken: string | undefined;
  if (input.webhookEnabled !== undefined || input.rotateWebhookToken) {
    ({ token: webhookToken } = await setScraperWebhook(deps.scrapers, actor, id, webhookWanted, {
      rotate: input.rotateWebhookToken ?? false,
    }));
  }
  const doc = await findDocument(deps, 'scrapers', viewer, id);
  return webhookToken ? { doc, webhookToken } : { doc };
}

/** Cancels a queued or running run: it ends `failed` with errorCode CANCELLED. */
export async function cancelRunDocument(
  deps: ScraperCollectionDeps,
  viewer: Viewer,
  id: number,
): Promise<{ doc: Doc; cancelled: boolean }> {
  const actor = scraperActor(viewer);
  await findDocument(deps, 'scraper-runs', viewer, id);
  const { cancelled } = await cancelScraperRun(deps.scrapers, actor, id);
  return { doc: await findDocument(deps, 'scraper-runs', viewer, id), cancelled };
}

export type DatasetChoice = { id: number; title: string; slug: string; catalogTitle: string };

/**
 * The datasets a scraper of this viewer may import into: the ones they can read and write, by the
 * same rule (canWriteDataset) that checks a targetDataset when it is saved.
 */
export async function targetDatasetChoices(
  deps: ScraperCollectionDeps,
  viewer: Viewer,
): Promise<DatasetChoice[]> {
  scraperActor(viewer);
  const all = { limit: 1000, sort: 'title' };
  const catalogs = new Map(
    (await findDocuments(deps, 'catalogs', viewer, all)).docs.map((doc) => [doc.id, doc]),
  );
  const facts = (doc: Doc) => ({
    isPublic: doc.isPublic === true,
    createdBy: (doc.createdBy as number) ?? null,
  });
  const choices: DatasetChoice[] = [];
  for (const dataset of (await findDocuments(deps, 'datasets', viewer, all)).docs) {
    const catalog = catalogs.get(dataset.catalog as number);
    if (!catalog || !canWriteDataset(viewer, facts(catalog), facts(dataset))) continue;
    choices.push({
      id: dataset.id,
      title: String(dataset.title),
      slug: String(dataset.slug),
      catalogTitle: String(catalog.title),
    });
  }
  return choices;
}

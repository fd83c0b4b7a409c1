import { ValidationError } from '../errors.ts';
import { MAX_NAME_LENGTH, MAX_SLUG_LENGTH, SLUG_PATTERN } from './manifest.ts';

// Scraper repos: where a repo's code comes from, and how its sync is tracked.

type SourceType = 'git' | 'upload';
export type SyncStatus = 'pending' | 'syncing' | 'synced' | 'failed';
export const MANIFEST_FILE = 'scrapers.yml';

export type CodeMap = Record<string, string>;

export type ScraperRepo = {
  id: number;
  name: string;
  slug: string;
  sourceType: SourceType;
  gitUrl: string | null;
  gitBranch: string | null;
  code: CodeMap | null;
  catalogId: number | null;
  createdBy: number | null;
  syncStatus: SyncStatus;
  lastSyncAt: string | null;
  lastSyncError: string | null;
};

export type RepoSource =
  { sourceType: 'upload'; code: CodeMap } | { sourceType: 'git'; gitUrl: string; gitBranch: string };

/**
 * An uploaded code map: a filename containing `..` or starting with `/` is path traversal and
 * refused (400), as are empty names and non-string contents.
 */
export function validateCodeMap(code: unknown): CodeMap {
  if (typeof code !== 'object' || code === null || Array.isArray(code)) {
    throw new ValidationError('code must be an object mapping file names to their content', {
      field: 'code',
      code: 'INVALID_CODE',
    });
  }
  const entries = Object.entries(code as Record<string, unknown>);
  if (entries.length === 0) {
    throw new ValidationError('code must contain at least one file', { field: 'code', code: 'INVALID_CODE' });
  }
  for (const [name, content] of entries) {
    if (name.includes('..') || name.startsWith('/')) {
      throw new ValidationError(`file name "${name}" is not allowed: no ".." and no leading "/"`, {
        field: 'code',
        code: 'INVALID_PATH',
      });
    }
    if (name.trim() === '' || name.includes('\\') || name.includes('\0')) {
      throw new ValidationError(`file name "${name}" is not allowed`, {
        field: 'code',
        code: 'INVALID_PATH',
      });
    }
    if (typeof content !== 'string') {
      throw new ValidationError(`the content of "${name}" must be a string`, {
        field: 'code',
        code: 'INVALID_CODE',
      });
    }
  }
  return Object.fromEntries(entries) as CodeMap;
}

/** A git source: an https URL (the runner clones only https) and a branch name git would accept. */
export function validateGitSource(
  gitUrl: unknown,
  gitBranch: unknown,
): { gitUrl: string; gitBranch: string } {
  let url: URL | undefined;
  try {
    url = typeof gitUrl === 'string' ? new URL(gitUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== 'https:' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ValidationError('gitUrl must be an https:// URL without credentials or fragment', {
      field: 'gitUrl',
      code: 'INVALID_GIT_URL',
    });
  }
  const branch = gitBranch === undefined || gitBranch === null || gitBranch === '' ? 'main' : gitBranch;
  if (
    typeof branch !== 'string' ||
    !/^[A-Za-z0-9._/-]{1,200}$/.test(branch) ||
    branch.includes('..') ||
    branch.startsWith('-') ||
    branch.startsWith('/')
  ) {
    throw new ValidationError('gitBranch is not a valid branch name', {
      field: 'gitBranch',
      code: 'INVALID_GIT_BRANCH',
    });
  }
  return { gitUrl: url.toString(), gitBranch: branch };
}

export function validateRepoIdentity(name: unknown, slug: unknown): { name: string; slug: string } {
  if (typeof name !== 'string' || name.trim() === '' || name.length > MAX_NAME_LENGTH) {
    throw new ValidationError(`name must be 1 to ${MAX_NAME_LENGTH} characters`, { field: 'name' });
  }
  if (typeof slug !== 'string' || !SLUG_PATTERN.test(slug) || slug.length > MAX_SLUG_LENGTH) {
    throw new ValidationError(
      `slug must be lowercase letters, digits and hyphens, at most ${MAX_SLUG_LENGTH}`,
      {
        field: 'slug',
      },
    );
  }
  return { name: name.trim(), slug };
}

/** A change of any of these fields makes the stored scrapers stale: a new sync is queued. */
export function sourceChanged(before: ScraperRepo, after: RepoSource): boolean {
  if (before.sourceType !== after.sourceType) return true;
  if (after.sourceType === 'git')
    return before.gitUrl !== after.gitUrl || before.gitBranch !== after.gitBranch;
  return JSON.stringify(sortedEntries(before.code ?? {})) !== JSON.stringify(sortedEntries(after.code));
}

function sortedEntries(code: CodeMap): [string, string][] {
  return Object.entries(code).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

import { DomainError } from './errors.ts';
import type { Role, TrustLevel } from './accounts/users.ts';
import type { ApiKeyGrant, KeyRouteClass } from './accounts/api-keys.ts';

// The one access rule for the catalog > dataset > event hierarchy. The collections API, the /api/v1
// read API (through the SQL twin in adapters/postgres/visibility.ts) and the admin pages all ask
// these functions, so "who may see what" is decided in one place.

/**
 * Who is asking: a logged-in user, or null for an anonymous caller. `key` is set when the caller
 * authenticated with an API key: they act as its owner, limited by the key (see keyMayCall).
 */
export type Viewer = {
  id: number;
  email: string;
  role: Role;
  trustLevel: TrustLevel;
  key?: ApiKeyGrant;
} | null;

/** `id` lets a key limited to some catalogs be checked; facts without it are outside such a key. */
export type CatalogAccessFacts = { id?: number; isPublic: boolean; createdBy: number | null };
export type DatasetAccessFacts = { isPublic: boolean; createdBy: number | null };

/** Admin powers come with a session only: an admin's API key acts as a plain user. */
function isAdmin(viewer: { role: Role; key?: ApiKeyGrant } | null): boolean {
  return viewer?.role === 'admin' && !viewer.key;
}

/**
 * The key's part of the one rule, before any route runs: a key never manages keys or the account
 * (403 API_KEY_NOT_ALLOWED), and a read key never writes (403 API_KEY_READ_ONLY). Object-level
 * limits (the catalogs a key covers) are in ownsCatalog and datasetVisibility below.
 */
export function keyMayCall(key: ApiKeyGrant, route: KeyRouteClass): ForbiddenError | null {
  if (route === 'account')
    return new ForbiddenError(
      'An API key cannot manage API keys or the account; use a session',
      'API_KEY_NOT_ALLOWED',
    );
  if (route === 'write' && key.scope === 'read')
    return new ForbiddenError('This API key is read-only', 'API_KEY_READ_ONLY');
  return null;
}

/** A key limited to a list of catalogs covers only those; a session or an all-catalogs key all. */
function keyCovers(viewer: Viewer, catalogId: number | undefined): boolean {
  const only = viewer?.key?.catalogIds;
  if (!only) return true;
  return catalogId !== undefined && only.includes(catalogId);
}

/** Writing needs a session or a write key (a read key is refused before any route, too). */
function keyMayWrite(viewer: Viewer): boolean {
  return viewer?.key?.scope !== 'read';
}

/** Admins and level 5 have no quotas and no rate limits. */
export function isUnlimited(viewer: { role: Role; trustLevel: TrustLevel }): boolean {
  return viewer.role === 'admin' || viewer.trustLevel === 5;
}

function ownsCatalog(viewer: Viewer, catalog: CatalogAccessFacts): boolean {
  return viewer !== null && catalog.createdBy === viewer.id && keyCovers(viewer, catalog.id);
}

/** A catalog is visible to admins, its owner, and everyone when it is public. */
export function canReadCatalog(viewer: Viewer, catalog: CatalogAccessFacts): boolean {
  return isAdmin(viewer) || ownsCatalog(viewer, catalog) || catalog.isPublic;
}

/**
 * A dataset inherits its catalog's permission and may restrict it further: anonymous callers and
 * other users see it only when both the catalog and the dataset are public; the owner of the
 * catalog (or of the dataset) and admins always see it. Events inherit their dataset's rule.
 */
export function canReadDataset(
  viewer: Viewer,
  catalog: CatalogAccessFacts,
  dataset: DatasetAccessFacts,
): boolean {
  if (isAdmin(viewer) || ownsCatalog(viewer, catalog)) return true;
  if (viewer !== null && dataset.createdBy === viewer.id && keyCovers(viewer, catalog.id)) return true;
  return catalog.isPublic && dataset.isPublic;
}

/**
 * Creating a catalog: any logged-in user, but not with a key limited to some catalogs (the new
 * catalog would be outside it: it could create what it can then neither see nor change).
 */
export function canCreateCatalog(viewer: Viewer): boolean {
  return viewer !== null && !viewer.key?.catalogIds;
}

/** Changing a catalog, or anything below it, is for its owner and admins. */
export function canWriteCatalog(viewer: Viewer, catalog: CatalogAccessFacts): boolean {
  return keyMayWrite(viewer) && (isAdmin(viewer) || ownsCatalog(viewer, catalog));
}

export function canWriteDataset(
  viewer: Viewer,
  catalog: CatalogAccessFacts,
  dataset: DatasetAccessFacts,
): boolean {
  if (canWriteCatalog(viewer, catalog)) return true;
  return (
    keyMayWrite(viewer) && viewer !== null && dataset.createdBy === viewer.id && keyCovers(viewer, catalog.id)
  );
}

// Imports, scheduled imports and scrapers. The same question everywhere: is the caller the one who
// started it, the owner of the catalog it writes into, or an admin? Everybody else is told the
// resource does not exist (the use cases answer 404), so its existence is not revealed.

/** An import (an ingest file, its jobs and their progress): who uploaded it and where it writes. */
type ImportAccessFacts = { uploadedBy: number | null; catalog: CatalogAccessFacts | null };

/** Reading an import and its recovery actions (retry, reset, approve, re-configure) alike. */
export function canAccessImport(viewer: Viewer, facts: ImportAccessFacts): boolean {
  if (viewer === null) return false;
  if (isAdmin(viewer)) return true;
  if (viewer.key?.catalogIds && !(facts.catalog && keyCovers(viewer, facts.catalog.id))) return false;
  if (facts.uploadedBy !== null && facts.uploadedBy === viewer.id) return true;
  return facts.catalog !== null && ownsCatalog(viewer, facts.catalog);
}

/**
 * What the SQL side needs for lists of imports and schedules (recommendations): all, or the caller's
 * own — and of those, with a key limited to some catalogs, only the ones writing into them
 * (canAccessImport's rule for lists).
 */
export type ImportVisibility =
  | { kind: 'all' }
  | { kind: 'uploaded-or-catalog-owned'; userId: number; catalogIds: readonly number[] | null };

export function importVisibility(viewer: Exclude<Viewer, null>): ImportVisibility {
  if (isAdmin(viewer)) return { kind: 'all' };
  return { kind: 'uploaded-or-catalog-owned', userId: viewer.id, catalogIds: viewer.key?.catalogIds ?? null };
}

/**
 * The catalogs a caller may import into, for the import wizard's list (GET /api/catalogs/with-datasets):
 * admins every catalog, everybody else the catalogs they own (canWriteCatalog).
 */
export type CatalogWriteScope =
  { kind: 'all' } | { kind: 'owned'; userId: number; catalogIds: readonly number[] | null };

export function catalogWriteScope(viewer: Exclude<Viewer, null>): CatalogWriteScope {
  if (isAdmin(viewer)) return { kind: 'all' };
  return { kind: 'owned', userId: viewer.id, catalogIds: viewer.key?.catalogIds ?? null };
}

/** A scheduled import: read, change, trigger and delete by its creator, the catalog owner, admins. */
type ScheduleAccessFacts = { createdBy: number | null; catalog: CatalogAccessFacts | null };

export function canManageSchedule(viewer: Viewer, facts: ScheduleAccessFacts): boolean {
  return canAccessImport(viewer, { uploadedBy: facts.createdBy, catalog: facts.catalog });
}

/** Levels 0-2 have no scraper access at all; 3 and 4 with quotas, 5 and admins without. */
/** A caller of the scraper use cases (a Viewer, or the runner's view of a repo owner). */
type ScraperCaller = { id: number; role: Role; trustLevel: number; key?: ApiKeyGrant } | null;

/** Scrapers write into catalogs their config names: a key limited to some catalogs has no access. */
export function hasScraperAccess(viewer: ScraperCaller): boolean {
  if (viewer?.key?.catalogIds) return false;
  return viewer !== null && (isAdmin(viewer) || viewer.trustLevel >= 3);
}

/**
 * A scraper repo, its scrapers and their runs: the repo's owner (while they keep scraper access)
 * and admins may see, sync, run, change and delete them.
 */
export function canManageScraperRepo(viewer: ScraperCaller, repo: { createdBy: number | null }): boolean {
  if (viewer === null) return false;
  if (isAdmin(viewer)) return true;
  return hasScraperAccess(viewer) && repo.createdBy !== null && repo.createdBy === viewer.id;
}

/**
 * What the SQL side needs to express the dataset rule: everything for admins, otherwise public
 * catalogs' public datasets plus what the viewer owns.
 */
type DatasetVisibility =
  { kind: 'all' } | { kind: 'public-or-owned'; ownerId: number | null; ownedCatalogs: number[] | null };

export function datasetVisibility(viewer: Viewer): DatasetVisibility {
  if (isAdmin(viewer)) return { kind: 'all' };
  return {
    kind: 'public-or-owned',
    ownerId: viewer?.id ?? null,
    ownedCatalogs: viewer?.key?.catalogIds ?? null,
  };
}

/**
 * The datasets a viewer may write, as a rule for SQL (the twin of canWriteDataset): admins all, a
 * read key none, otherwise the datasets of the viewer's catalogs and those they created (within a
 * key's catalogs). Location privacy (issue 38) shows exact locations to exactly these.
 */
type DatasetWriteScope =
  { kind: 'all' } | { kind: 'none' } | { kind: 'owned'; ownerId: number; ownedCatalogs: number[] | null };

export function datasetWriteScope(viewer: Viewer): DatasetWriteScope {
  if (isAdmin(viewer)) return { kind: 'all' };
  if (viewer === null || !keyMayWrite(viewer)) return { kind: 'none' };
  return { kind: 'owned', ownerId: viewer.id, ownedCatalogs: viewer.key?.catalogIds ?? null };
}

/**
 * Who a cached answer is for: callers who may see different things never share an entry. A key
 * limited to some catalogs sees less than its owner's session, so its catalogs are part of it.
 */
export function viewerCacheIdentity(viewer: Viewer): string {
  if (viewer === null) return '';
  const only = viewer.key?.catalogIds;
  return `${viewer.id}:${viewer.role}${only ? `:${only.join(',')}` : ''}`;
}

export class UnauthorizedError extends DomainError {
  constructor(message = 'Authentication required', code = 'UNAUTHENTICATED') {
    super('unauthorized', message, { code });
    this.name = 'UnauthorizedError';
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = 'You are not allowed to do this', code = 'FORBIDDEN') {
    super('forbidden', message, { code });
    this.name = 'ForbiddenError';
  }
}

export function requireViewer(viewer: Viewer): Exclude<Viewer, null> {
  if (viewer === null) throw new UnauthorizedError();
  return viewer;
}

export function requireAdmin(viewer: Viewer): Exclude<Viewer, null> {
  const user = requireViewer(viewer);
  if (!isAdmin(user)) throw new ForbiddenError('Only an admin may do this', 'ADMIN_ONLY');
  return user;
}

/**
 * Changes to a user's role or trust level: only admins, and nobody raises their own standing
 * (an admin may not demote themselves either, which would lock the last admin out).
 */
export function checkStandingChange(
  viewer: Viewer,
  target: { id: number; role: Role; trustLevel: TrustLevel },
  change: { role?: Role; trustLevel?: TrustLevel },
): void {
  const roleChanges = change.role !== undefined && change.role !== target.role;
  const levelChanges = change.trustLevel !== undefined && change.trustLevel !== target.trustLevel;
  if (!roleChanges && !levelChanges) return;
  const user = requireViewer(viewer);
  if (user.role !== 'admin') {
    throw new ForbiddenError('Only an admin may change a role or trust level', 'STANDING_CHANGE_FORBIDDEN');
  }
  if (user.id === target.id && roleChanges) {
    throw new ForbiddenError('An admin cannot change their own role', 'STANDING_CHANGE_FORBIDDEN');
  }
}

// Saved views of the Explore page (issue 38 §1): a public view opens for everyone, a private one for
// its owner and admins; only they change or delete it. The events a view shows are still each
// viewer's own (the read API decides them), so a public view of private data shows nothing private.

type ViewAccessFacts = { ownerId: number; isPublic: boolean };

export function canReadView(viewer: Viewer, view: ViewAccessFacts): boolean {
  return view.isPublic || canWriteView(viewer, view);
}

export function canWriteView(viewer: Viewer, view: ViewAccessFacts): boolean {
  return isAdmin(viewer) || (viewer !== null && view.ownerId === viewer.id);
}

/**
 * A background export's status (application/read/background-exports.ts) is its requester's only:
 * the same account with the same credential kind (a session, or the same API key: a key limited to
 * some catalogs must not follow what a session asked for), or for an anonymous request an anonymous
 * caller holding its unguessable id. Not even an admin follows someone else's.
 */
export function canFollowExport(
  viewer: Viewer,
  job: { requestedBy: number | null; requestedWithKey: number | null },
): boolean {
  return (viewer?.id ?? null) === job.requestedBy && (viewer?.key?.id ?? null) === job.requestedWithKey;
}

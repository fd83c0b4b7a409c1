import {
  canCreateCatalog,
  canReadCatalog,
  canReadDataset,
  canWriteCatalog,
  canWriteDataset,
  checkStandingChange,
  ForbiddenError,
  requireAdmin,
  requireViewer,
  type Viewer,
} from '../../domain/access.ts';
import {
  COLLECTION_FIELDS,
  COLLECTION_PAGING,
  type CollectionSlug,
  type DocumentCollectionSlug,
  type Page,
  pageOf,
  parseDateFields,
} from '../../domain/collections/collections.ts';
import { NotFoundError, ValidationError } from '../../domain/errors.ts';
import { checkEventDataSize } from '../../domain/read/events.ts';
import type { Role, TrustLevel } from '../../domain/accounts/users.ts';
import { checkPasswordStrength, normaliseEmail, parseTrustLevel } from '../../domain/accounts/users.ts';
import { parseCollectionSort } from '../../domain/read/sort.ts';
import { parseWhere, whereTreeFromQuery } from '../../domain/read/where.ts';
import type {
  CollectionRepository,
  Doc,
  DocValues,
  HierarchyFacts,
} from '../../ports/collections/collection-repository.ts';
import type { PasswordHasher } from '../../ports/accounts/password-hasher.ts';
import { checkPageBytes } from '../../domain/read/page-bytes.ts';
import { checkPageDepth } from '../../domain/read/page-depth.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import type { SessionStore } from '../../ports/accounts/session-store.ts';

// The collections API's use cases: list, read, create, update and delete documents of any
// collection, each guarded by that collection's access rules (domain/access.ts). Reads filter in
// the database; writes look up where the document sits and ask the domain rule.

export type CollectionDeps = {
  repository: CollectionRepository;
  passwords: PasswordHasher;
  sessions: SessionStore;
  quotas: Quotas;
  defaultTrustLevel: TrustLevel;
};

export type ListQuery = Record<string, unknown> & { sort?: string; limit?: number; page?: number };

export async function findDocuments(
  deps: Pick<CollectionDeps, 'repository'>,
  collection: CollectionSlug,
  viewer: Viewer,
  query: ListQuery,
): Promise<Page & { docs: Doc[] }> {
  // Accounts are nobody's public business: the users collection is for logged-in callers only.
  if (collection === 'users') requireViewer(viewer);
  const fields = COLLECTION_FIELDS[collection];
  const where = parseWhere(whereTreeFromQuery(query), fields);
  const sort = parseCollectionSort(query.sort, fields);
  const limit = query.limit ?? COLLECTION_PAGING.defaultLimit;
  const page = query.page ?? 1;
  // Before the query: a deep page costs its skipped rows (page-depth.ts).
  checkPageDepth(
    { skipped: (page - 1) * limit, limit },
    'page',
    'ask for the documents after the last one you have with sort=id&where[id][greater_than]=<its id> (keyset paging), or narrow where',
  );
  const { docs, totalDocs } = await deps.repository.find(collection, viewer, { where, sort, limit, page });
  checkPageBytes(docs, limit);
  return { docs, ...pageOf(totalDocs, limit, page) };
}

function notFound(collection: CollectionSlug, id: number): never {
  throw new NotFoundError(`No ${collection} document with id ${id}`, { code: 'DOCUMENT_NOT_FOUND' });
}

export async function findDocument(
  deps: Pick<CollectionDeps, 'repository'>,
  collection: CollectionSlug,
  viewer: Viewer,
  id: number,
): Promise<Doc> {
  if (collection === 'users') requireViewer(viewer);
  return (await deps.repository.findById(collection, viewer, id)) ?? notFound(collection, id);
}

/** Facts of a document the viewer may read; 404 (never 403) for one they may not see. */
async function readableFacts(
  deps: CollectionDeps,
  collection: 'catalogs' | 'datasets' | 'events',
  viewer: Viewer,
  id: number,
): Promise<HierarchyFacts> {
  const facts = await deps.repository.hierarchy(collection, id);
  if (!facts) return notFound(collection, id);
  const readable = facts.dataset
    ? canReadDataset(viewer, facts.catalog, facts.dataset)
    : canReadCatalog(viewer, facts.catalog);
  if (!readable) return notFound(collection, id);
  return facts;
}

function canWrite(viewer: Viewer, facts: HierarchyFacts): boolean {
  return facts.dataset
    ? canWriteDataset(viewer, facts.catalog, facts.dataset)
    : canWriteCatalog(viewer, facts.catalog);
}

/** A parent named in a new document: 400 when it does not exist or is not visible, 403 when read-only. */
async function writableParent(
  deps: CollectionDeps,
  collection: 'catalogs' | 'datasets',
  viewer: Viewer,
  id: unknown,
): Promise<HierarchyFacts> {
  const field = collection === 'catalogs' ? 'catalog' : 'dataset';
  if (typeof id !== 'number') throw new ValidationError(`${field} is required`, { field });
  const facts = await deps.repository.hierarchy(collection, id);
  const readable =
    facts &&
    (facts.dataset
      ? canReadDataset(viewer, facts.catalog, facts.dataset)
      : canReadCatalog(viewer, facts.catalog));
  if (!facts || !readable)
    throw new ValidationError(`${field} ${id} does not exist`, { field, code: 'INVALID_REFERENCE' });
  if (!canWrite(viewer, facts)) throw new ForbiddenError(`You cannot add to ${field} ${id}`);
  return facts;
}

/** A dataset's `dateFields`, when the input names them, in the one form the read API reads. */
function declaredDateFields(input: DocValues): DocValues {
  return 'dateFields' in input ? { dateFields: parseDateFields(input.dateFields) } : {};
}

function onlyAdminSetsOwner(viewer: Viewer, input: DocValues): void {
  if ('createdBy' in input && viewer?.role !== 'admin') {
    throw new ForbiddenError('Only an admin may set createdBy', 'OWNER_CHANGE_FORBIDDEN');
  }
}

export async function createDocument(
  deps: CollectionDeps,
  collection: DocumentCollectionSlug,
  viewer: Viewer,
  input: DocValues,
): Promise<Doc> {
  // Writes need a login: anonymous callers get 401 before anything is looked up.
  requireViewer(viewer);
  let values: DocValues;
  switch (collection) {
    case 'users': {
      requireAdmin(viewer);
      const password = String(input.password ?? '');
      checkPasswordStrength(password);
      values = {
        email: normaliseEmail(String(input.email ?? '')),
        passwordHash: await deps.passwords.hash(password),
        role: (input.role as Role | undefined) ?? 'user',
        trustLevel: (input.trustLevel as TrustLevel | undefined) ?? deps.defaultTrustLevel,
      };
      break;
    }
    case 'catalogs': {
      const user = requireViewer(viewer);
      if (!canCreateCatalog(viewer))
        throw new ForbiddenError(
          'An API key limited to some catalogs cannot create catalogs',
          'API_KEY_CATALOGS',
        );
      onlyAdminSetsOwner(viewer, input);
      values = { ...input, createdBy: input.createdBy ?? user.id };
      break;
    }
    case 'datasets': {
      const user = requireViewer(viewer);
      onlyAdminSetsOwner(viewer, input);
      await writableParent(deps, 'catalogs', viewer, input.catalog);
      values = { ...input, ...declaredDateFields(input), createdBy: input.createdBy ?? user.id };
      break;
    }
    case 'events': {
      const user = requireViewer(viewer);
      checkEventDataSize(input.data);
      const parent = await writableParent(deps, 'datasets', viewer, input.dataset);
      await deps.quotas.take(user.id, [{ quota: 'totalEvents', amount: 1 }]);
      values = { ...input, catalog: parent.catalogId };
      break;
    }
  }
  let id: number;
  try {
    id = await deps.repository.insert(collection, values);
  } catch (error) {
    // The event was counted before the insert; one that was never stored gives its unit back.
    if (collection === 'events' && viewer)
      await deps.quotas.give(viewer.id, [{ quota: 'totalEvents', amount: 1 }]);
    throw error;
  }
  return findDocument(deps, collection, viewer, id);
}

export async function updateDocument(
  deps: CollectionDeps,
  collection: DocumentCollectionSlug,
  viewer: Viewer,
  id: number,
  input: DocValues,
): Promise<Doc> {
  requireViewer(viewer);
  let values: DocValues = { ...input };
  let endSessions = false;
  if (collection === 'users') {
    // A level that is no level (NaN from a form, 2.5, 9) is a 400 before anything is looked up.
    if (input.trustLevel !== undefined) input = { ...input, trustLevel: parseTrustLevel(input.trustLevel) };
    const target = await findDocument(deps, collection, viewer, id);
    checkStandingChange(
      viewer,
      target as Doc & { role: Role; trustLevel: TrustLevel },
      input as { role?: Role; trustLevel?: TrustLevel },
    );
    if (viewer?.role !== 'admin' && ('email' in input || 'password' in input)) {
      throw new ForbiddenError(
        'Change your email or password with /api/users/change-email or /api/users/change-password',
        'USE_ACCOUNT_ROUTES',
      );
    }
    values = {};
    if (input.email !== undefined) values.email = normaliseEmail(String(input.email));
    if (input.role !== undefined) values.role = input.role;
    if (input.trustLevel !== undefined) values.trustLevel = input.trustLevel;
    if (input.password !== undefined) {
      checkPasswordStrength(String(input.password));
      values.passwordHash = await deps.passwords.hash(String(input.password));
    }
    const was = target as Doc & { email: string; role: Role; trustLevel: TrustLevel };
    endSessions =
      values.passwordHash !== undefined ||
      (values.email !== undefined && values.email !== was.email) ||
      (values.role !== undefined && values.role !== was.role) ||
      (values.trustLevel !== undefined && Number(values.trustLevel) < was.trustLevel);
  } else {
    const facts = await readableFacts(deps, collection, viewer, id);
    if (!canWrite(viewer, facts)) throw new ForbiddenError(`You cannot change this ${collection} document`);
    if (collection === 'events') checkEventDataSize(input.data);
    onlyAdminSetsOwner(viewer, input);
    if (collection === 'datasets') values = { ...values, ...declaredDateFields(input) };
    const parentField = collection === 'datasets' ? 'catalog' : collection === 'events' ? 'dataset' : null;
    if (parentField && parentField in input) {
      throw new ValidationError(`${parentField} cannot be changed; create the document where it belongs`, {
        field: parentField,
      });
    }
  }
  await deps.repository.update(collection, id, values);
  // A new password, address or role, or a lowered trust level, ends the user's sessions: whoever
  // held a token (perhaps the reason for a reset) logs in again, under the new standing. A raised
  // trust level keeps them: sessions and quotas read the level from the users row on every
  // request, so the next request already has the new limits, and nobody is logged out for a gift.
  if (endSessions) await deps.sessions.revokeAllForUser(id);
  return findDocument(deps, collection, viewer, id);
}

export async function deleteDocument(
  deps: CollectionDeps,
  collection: DocumentCollectionSlug,
  viewer: Viewer,
  id: number,
): Promise<Doc> {
  requireViewer(viewer);
  const doc = await findDocument(deps, collection, viewer, id);
  if (collection === 'users') {
    const admin = requireAdmin(viewer);
    if (admin.id === id)
      throw new ForbiddenError(
        'Delete your own account with /api/users/delete-account',
        'USE_ACCOUNT_ROUTES',
      );
  } else {
    const facts = await readableFacts(deps, collection, viewer, id);
    if (!canWrite(viewer, facts)) throw new ForbiddenError(`You cannot delete this ${collection} document`);
  }
  // A deleted user's sessions end with the account (sessions cascade); revoked first, explicitly.
  if (collection === 'users') await deps.sessions.revokeAllForUser(id);
  // totalEvents is a lifetime count (spec: Limits), so deleting an event gives nothing back.
  await deps.repository.remove(collection, id);
  return doc;
}

/**
 * A dataset the viewer may change (its settings page, issue 38 §6): the document, or 404 when they
 * cannot read it or can only read it — a settings page of someone else's dataset does not exist.
 * The save goes through updateDocument, the use case of PATCH /api/datasets/{id}.
 */
export async function writableDataset(deps: CollectionDeps, viewer: Viewer, id: number): Promise<Doc> {
  requireViewer(viewer);
  const facts = await readableFacts(deps, 'datasets', viewer, id);
  if (!canWrite(viewer, facts)) return notFound('datasets', id);
  return findDocument(deps, 'datasets', viewer, id);
}

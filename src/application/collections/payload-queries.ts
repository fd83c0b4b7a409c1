import type { CollectionSlug } from '../../domain/collections/collections.ts';
import {
  applySelect,
  parsePagination,
  parseSelect,
  tooManyForOneAnswer,
  UNPAGINATED_MAX,
} from '../../domain/collections/payload-options.ts';
import type { Viewer } from '../../domain/access.ts';
import { type CollectionDeps, findDocument, findDocuments, type ListQuery } from './collection-documents.ts';

// The Payload options of the collections API (issue 35 §6; docs/api.md, "Payload clients"): count,
// select and pagination=false, over the one list and read of collection-documents.ts, so where,
// visibility, the page depth and byte bounds are the same as for every page.

type Deps = Pick<CollectionDeps, 'repository'>;

/** GET /api/{collection}/count: `{totalDocs}` for a where, read as the list reads it (one row fetched). */
export async function countDocuments(
  deps: Deps,
  collection: CollectionSlug,
  viewer: Viewer,
  query: ListQuery,
) {
  const { totalDocs } = await findDocuments(deps, collection, viewer, { ...query, limit: 1, page: 1 });
  return { totalDocs };
}

/**
 * GET /api/{collection} with Payload's options: `select` applied to every document;
 * `pagination=false` answers every matching document as one page of at most UNPAGINATED_MAX (a
 * query that matches more is a 400 PAGINATION_CAP, never a silent cut or an unbounded read).
 */
export async function listDocuments(
  deps: Deps,
  collection: CollectionSlug,
  viewer: Viewer,
  query: ListQuery,
  fields: readonly string[],
) {
  const selection = parseSelect(query, fields);
  const paginated = parsePagination(query.pagination);
  const page = paginated
    ? await findDocuments(deps, collection, viewer, query)
    : await findDocuments(deps, collection, viewer, { ...query, limit: UNPAGINATED_MAX, page: 1 });
  if (!paginated && page.totalDocs > UNPAGINATED_MAX) throw tooManyForOneAnswer(page.totalDocs);
  const docs = page.docs.map((doc) => applySelect(doc as Record<string, unknown>, selection));
  return { ...page, docs };
}

/** GET /api/{collection}/{id} with `select`. */
export async function readDocument(
  deps: Deps,
  collection: CollectionSlug,
  viewer: Viewer,
  id: number,
  query: Record<string, unknown>,
  fields: readonly string[],
) {
  const selection = parseSelect(query, fields);
  return applySelect(
    (await findDocument(deps, collection, viewer, id)) as Record<string, unknown>,
    selection,
  );
}

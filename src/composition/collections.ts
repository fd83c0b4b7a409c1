import { collectionsHttp } from '../adapters/http/collections/collections-http.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import { postgresCollectionRepository } from '../adapters/postgres/collections/collection-repository.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import type { CollectionDeps } from '../application/collections/collection-documents.ts';

// The collections (users, catalogs, datasets, events, ... with `where`/`sort`): the one repository
// that every other feature asks about the catalog > dataset hierarchy, built once per pool. The
// collection endpoints' access rules are the accounts' (sessions, passwords, quotas, trust levels),
// so accounts.ts assembles their use cases (httpDeps().collections) and src/compose.ts hands them to
// `http`, after the accounts' routes.

export function composeCollections(on: DatabasePool) {
  return {
    repository: postgresCollectionRepository(on),
    http: (useCases: CollectionDeps): HttpFeature => collectionsHttp(useCases),
  };
}

export type CollectionsFeature = ReturnType<typeof composeCollections>;

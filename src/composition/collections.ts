import { postgresCollectionRepository } from '../adapters/postgres/collections/collection-repository.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';

// The collections (users, catalogs, datasets, events, ... with `where`/`sort`): the one repository
// that every other feature asks about the catalog > dataset hierarchy, built once per pool. The
// collection endpoints' access rules are the accounts' (sessions, passwords, quotas, trust levels),
// so accounts.ts assembles their use cases and registers their routes in the accounts HTTP area.

export function composeCollections(on: DatabasePool) {
  return { repository: postgresCollectionRepository(on) };
}

export type CollectionsFeature = ReturnType<typeof composeCollections>;

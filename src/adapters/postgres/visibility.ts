import type { FragmentSqlToken } from 'slonik';
import { datasetVisibility, datasetWriteScope, type Viewer } from '../../domain/access.ts';
import { sql } from './database.ts';

// The SQL twin of the access rule in domain/access.ts (canReadCatalog / canReadDataset), for
// queries that must filter in the database: the collections API, the /api/v1 read API and the
// admin pages. test/integration/service/access.test.ts checks that both give the same answers.
//
// Use, with the aliases of your query:
//   where ${visibleDatasetCondition(viewer, { dataset: 'd', catalog: 'c' })}   -- datasets d join catalogs c

type HierarchyAliases = { dataset: string; catalog: string };

function column(alias: string, name: string): FragmentSqlToken {
  return sql.fragment`${sql.identifier([alias, name])}`;
}

/** An API key limited to some catalogs owns only those (domain/access.ts keyCovers). */
function covered(only: number[] | null, catalogAlias: string): FragmentSqlToken {
  if (only === null) return sql.fragment`true`;
  return sql.fragment`${column(catalogAlias, 'id')} = any(${sql.array(only, 'int8')})`;
}

/** True for the catalogs the viewer may see: admins all, owners theirs, everyone the public ones. */
export function visibleCatalogCondition(viewer: Viewer, catalogAlias: string): FragmentSqlToken {
  const rule = datasetVisibility(viewer);
  if (rule.kind === 'all') return sql.fragment`true`;
  if (rule.ownerId === null) return sql.fragment`${column(catalogAlias, 'is_public')}`;
  return sql.fragment`(${column(catalogAlias, 'is_public')} or (${column(catalogAlias, 'created_by')} = ${rule.ownerId} and ${covered(rule.ownedCatalogs, catalogAlias)}))`;
}

/** True for the datasets the viewer may see (and so for their events); needs the catalog joined. */
export function visibleDatasetCondition(viewer: Viewer, aliases: HierarchyAliases): FragmentSqlToken {
  const rule = datasetVisibility(viewer);
  if (rule.kind === 'all') return sql.fragment`true`;
  const isPublic = sql.fragment`(${column(aliases.catalog, 'is_public')} and ${column(aliases.dataset, 'is_public')})`;
  if (rule.ownerId === null) return isPublic;
  const owned = sql.fragment`(${column(aliases.catalog, 'created_by')} = ${rule.ownerId} or ${column(
    aliases.dataset,
    'created_by',
  )} = ${rule.ownerId})`;
  return sql.fragment`(${isPublic} or (${owned} and ${covered(rule.ownedCatalogs, aliases.catalog)}))`;
}

/** True for the datasets the viewer may write (canWriteDataset); needs the catalog joined. */
export function writableDatasetCondition(viewer: Viewer, aliases: HierarchyAliases): FragmentSqlToken {
  const rule = datasetWriteScope(viewer);
  if (rule.kind === 'all') return sql.fragment`true`;
  if (rule.kind === 'none') return sql.fragment`false`;
  const owned = sql.fragment`(${column(aliases.catalog, 'created_by')} = ${rule.ownerId} or ${column(
    aliases.dataset,
    'created_by',
  )} = ${rule.ownerId})`;
  return sql.fragment`(${owned} and ${covered(rule.ownedCatalogs, aliases.catalog)})`;
}

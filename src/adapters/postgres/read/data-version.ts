import type { FragmentSqlToken } from 'slonik';
import { sql } from '../database.ts';

// The data version of the read API, in one place: what every cache of read answers is checked
// against. It has two parts, both raised in the writing transaction, so a committed write is always
// seen: the scope version (migration 0230: every change to datasets or catalogs, which decide
// visibility, titles, slugs and location privacy) and the sum of the data versions (migration 0240:
// every change to a dataset's events) of the datasets read. Versions only grow and their rows are
// never deleted, and the set of datasets is fixed while the scope version holds, so the sum changes
// whenever one of the versions does. As text: `scope:data`.
//
// Its users: the /events page cache (page-cache.ts, per answer's datasets), the tiles' URL version
// (every dataset's, `scopeDataUrlVersion`) and the keys of materialised exports (scope.ts
// #readDataVersion, which adds the database's identity and the datasets read).

/** The scope version, as text. */
export const SCOPE_VERSION = sql.fragment`(select version::text from chronomap_read_scope_version)`;

/**
 * The data version of a set of datasets as SQL text, `scope:data`: null for every dataset, else
 * their ids (a list, or an int8[] expression of the statement it is selected in).
 */
export function dataSignature(datasetIds: number[] | FragmentSqlToken | null): FragmentSqlToken {
  const ids = Array.isArray(datasetIds) ? sql.array(datasetIds, 'int8') : datasetIds;
  const versions =
    ids === null
      ? sql.fragment`select coalesce(sum(version), 0) from dataset_data_versions`
      : sql.fragment`select coalesce(sum(version), 0) from dataset_data_versions where dataset_id = any(${ids})`;
  return sql.fragment`(${SCOPE_VERSION} || ':' || (${versions})::text)`;
}

/** A data signature as a URL parameter value (`scope-data`: no character a URL must escape). */
export function urlVersion(signature: string): string {
  return signature.replace(':', '-');
}

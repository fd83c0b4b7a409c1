import { CRS84 } from './ogc.ts';
import { type CqlNode, invalidFilter } from './cql2-tree.ts';
import { parseCql2Json } from './cql2-json.ts';
import { parseCql2Text } from './cql2-text.ts';

// The filter parameters of OGC API – Features Part 3 on /ogc items: `filter` in `filter-lang`
// cql2-text (the default) or cql2-json, with `filter-crs` only CRS84. The filter is parsed into the
// raw tree of cql2-tree.ts before the collection is looked up (a malformed filter is a 400 without a
// query); checkFilter then checks it against the collection's queryables (its typed properties).

const FILTER_LANGUAGES = ['cql2-text', 'cql2-json'] as const;

/** The parsed filter of an items request, or null without `filter`; a 400 for anything malformed. */
export function parseOgcFilter(query: Record<string, unknown>): CqlNode | null {
  const text = single(query.filter, 'filter');
  const language = single(query['filter-lang'], 'filter-lang') ?? 'cql2-text';
  const crs = single(query['filter-crs'], 'filter-crs');
  if (!(FILTER_LANGUAGES as readonly string[]).includes(language)) {
    invalidFilter(`filter-lang must be cql2-text or cql2-json (got "${language.slice(0, 40)}")`);
  }
  if (crs !== null && crs !== CRS84) invalidFilter(`filter-crs must be ${CRS84}, the only CRS offered`);
  if (text === null) return null;
  return language === 'cql2-json' ? parseCql2Json(text) : parseCql2Text(text);
}

function single(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) invalidFilter(`${name} must be given once`);
  const text = String(value).trim();
  return text === '' ? null : text;
}

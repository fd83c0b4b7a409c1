import { type Bounds, type DateRange, invalid, parseDate } from './read-query.ts';
import { isSlug } from '../collections/slugs.ts';
import { checkPageDepth, MAX_PAGE_OFFSET } from './page-depth.ts';

// OGC API – Features, Part 1 (Core) with the GeoJSON encoding: the parameter rules and the links of
// /ogc, without I/O. The standard is OGC 17-069r4; requirement names below are its /req/core/* ids.
// Every value a client sends is checked here and refused with a ValidationError naming the
// parameter (400, /req/core/query-param-invalid), never silently ignored.

export const CONFORMANCE_CLASSES = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  // Part 3 (filtering, src/domain/read/ogc-filter.ts) with the CQL2 classes of the subset it parses.
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2',
  'http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions',
  // Part 5 (schemas): /collections/{id}/schema.
  'http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/schemas',
] as const;

/** The only CRS of Part 1 (longitude, latitude in WGS 84); Part 2 (other CRS) is not offered. */
export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
export const GREGORIAN_TRS = 'http://www.opengis.net/def/uom/ISO-8601/0/Gregorian';

export const GEOJSON_TYPE = 'application/geo+json';
export const JSON_TYPE = 'application/json';
/** Queryables and feature schemas (Part 3, Part 5). */
export const SCHEMA_TYPE = 'application/schema+json';
/** The service description is the whole service's OpenAPI 3.1 document (/api/openapi.json). */
export const OPENAPI_TYPE = 'application/vnd.oai.openapi+json;version=3.1';

/** Items per page when `limit` is absent, and the most a page holds (a larger limit is clamped). */
export const OGC_DEFAULT_LIMIT = 100;
export const OGC_MAX_LIMIT = 1000;

/**
 * Parameters other parts of OGC API – Features define. Part 1 requires a 400 for a parameter the
 * server does not declare (/req/core/query-param-unknown); these get a message that says which part
 * they belong to, so that a client learns the server lacks the part rather than that it mistyped.
 */
const UNSUPPORTED_PARAMETERS: Record<string, string> = {
  crs: 'Part 2 (coordinate reference systems by reference)',
  'bbox-crs': 'Part 2 (coordinate reference systems by reference)',
  sortby: 'Part 8 (sorting)',
  properties: 'Part 6 (property selection)',
  'exclude-properties': 'Part 6 (property selection)',
  skipGeometry: 'Part 6 (property selection)',
  q: 'Part 9 (text search, draft)',
};

/** Refuses, naming them all, the standard's parameters that this server does not implement. */
export function refuseUnsupportedParameters(query: Record<string, unknown>): void {
  const found = Object.keys(query).filter((name) => Object.hasOwn(UNSUPPORTED_PARAMETERS, name));
  if (found.length === 0) return;
  const named = found.map((name) => `${name} (OGC API – Features ${UNSUPPORTED_PARAMETERS[name]})`);
  throw invalid(
    found[0] ?? 'query',
    `not supported by this server: ${named.join(', ')}; it implements Part 1 Core, GeoJSON, Part 3 filtering and Part 5 schemas`,
  );
}

/**
 * `f`: the encoding. Only JSON (GeoJSON for features) is offered; `f=html` is refused rather than
 * redirected, because there is no HTML view of a collection to send a browser to.
 */
export function checkFormat(value: unknown): void {
  const text = singleText(value, 'f');
  if (text === null || text === 'json') return;
  throw invalid(
    'f',
    text === 'html'
      ? 'f=html is not offered: this server encodes OGC API – Features as JSON and GeoJSON only (f=json)'
      : `f must be json (got "${text}")`,
  );
}

/**
 * `bbox`: minLon,minLat,maxLon,maxLat in CRS84 (/req/core/fc-bbox-definition). minLon > maxLon is a
 * box across the antimeridian, as the standard allows. Six numbers (a 3D box) are refused: events
 * have no height.
 */
export function parseBbox(value: unknown): Bounds | null {
  if (value === undefined || value === null) return null;
  const text = singleText(value, 'bbox');
  // Given but empty (`bbox=`): refused, not read as "no box", which answered the whole collection.
  if (text === null)
    throw invalid('bbox', 'bbox is empty: give minLon,minLat,maxLon,maxLat, or leave bbox out');
  const parts = text.split(',');
  if (parts.length === 6) {
    throw invalid('bbox', 'bbox with 6 numbers (a 3D box) is not supported: events have no height');
  }
  if (parts.length !== 4) {
    throw invalid('bbox', `bbox must be 4 numbers minLon,minLat,maxLon,maxLat (got "${text}")`);
  }
  const numbers = parts.map((part) => {
    const trimmed = part.trim();
    const number = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) ? Number(trimmed) : Number.NaN;
    if (!Number.isFinite(number)) throw invalid('bbox', `bbox values must be numbers (got "${part}")`);
    return number;
  });
  const [west = 0, south = 0, east = 0, north = 0] = numbers;
  const within = (name: string, number: number, limit: 90 | 180) => {
    if (number < -limit || number > limit) {
      throw invalid('bbox', `bbox ${name} must be between -${limit} and ${limit} (got ${number})`);
    }
  };
  within('minLon', west, 180);
  within('maxLon', east, 180);
  within('minLat', south, 90);
  within('maxLat', north, 90);
  if (south > north) throw invalid('bbox', `bbox minLat (${south}) must not exceed maxLat (${north})`);
  return { west, south, east, north };
}

/**
 * `datetime` (/req/core/fc-time-definition): an instant, a closed interval `a/b`, or a half-bounded
 * one `../b`, `a/..` (an empty end is read as open too). Events are instants, so an instant matches
 * the events at it (a date: that whole UTC day) and an interval the events within it, both ends
 * included, exactly as startDate/endDate of /api/v1. The answer is a half-open range [from, to).
 */
export function parseDatetime(value: unknown): DateRange {
  const text = singleText(value, 'datetime');
  if (text === null) return { from: null, to: null };
  const parts = text.split('/');
  if (parts.length > 2)
    throw invalid('datetime', `datetime must be an instant or an interval a/b (got "${text}")`);
  if (parts.length === 1) {
    if (text === '..') throw invalid('datetime', 'datetime ".." alone is not an instant; use a/.. or ../b');
    return { from: parseDate(text, 'datetime', 'start'), to: parseDate(text, 'datetime', 'end') };
  }
  const [start = '', end = ''] = parts;
  const open = (part: string) => part === '' || part === '..';
  if (open(start) && open(end)) {
    throw invalid('datetime', `datetime needs at least one end of the interval (got "${text}")`);
  }
  const from = open(start) ? null : parseDate(start, 'datetime', 'start');
  const to = open(end) ? null : parseDate(end, 'datetime', 'end');
  if (from !== null && to !== null && from >= to) {
    throw invalid('datetime', `datetime's start must not be after its end (got "${text}")`);
  }
  return { from, to };
}

/**
 * `limit` (/req/core/fc-limit-definition): an integer of at least 1. A limit above the maximum is
 * not an error: the standard lets the server answer with fewer items, so it is clamped.
 */
export function parseLimit(value: unknown): number {
  const text = singleText(value, 'limit');
  if (text === null) return OGC_DEFAULT_LIMIT;
  const number = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < 1) {
    throw invalid('limit', `limit must be an integer of at least 1 (got "${text}")`);
  }
  return Math.min(number, OGC_MAX_LIMIT);
}

/**
 * `offset`: how many matching items to skip, ordered by id. The next and prev links carry it. It
 * must be a multiple of the page's limit, because the read model answers whole pages, and reach no
 * deeper than page-depth.ts allows: past that the `next` link pages by `cursor`.
 */
export function parseOffset(value: unknown, limit: number): { page: number; limit: number } {
  const text = singleText(value, 'offset');
  if (text === null) return { page: 1, limit };
  const number = /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(number)) {
    throw invalid('offset', `offset must be a whole number of items (got "${text}")`);
  }
  checkPageDepth(
    { skipped: number, limit },
    'offset',
    'follow the next links, which page by cursor past that depth, or narrow bbox or datetime',
  );
  if (number % limit !== 0) {
    throw invalid('offset', `offset must be a multiple of limit (${limit}); got ${number}`);
  }
  return { page: number / limit + 1, limit };
}

/**
 * A collection id is a dataset slug (isSlug). Anything else names no collection (404) without a
 * query.
 */
export function isCollectionId(value: string): boolean {
  return isSlug(value);
}

/** A feature id is an event id: a positive integer. Anything else is an unknown feature (404). */
export function parseFeatureId(value: string): number | null {
  if (!/^[1-9]\d{0,17}$/.test(value)) return null;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : null;
}

export type Link = { href: string; rel: string; type: string; title?: string };

/** Where an items page starts: after `offset` items, or after the position of a `cursor`. */
export type PageStart = { offset: number } | { cursor: string };

/** The parameters that select items, which every paging link of a page carries on. */
export const KEPT_PARAMETERS = ['bbox', 'datetime', 'filter', 'filter-lang', 'filter-crs'] as const;

/**
 * The paging links of an items page: self, next while more may match, prev after the first page of
 * an offset page (the filter parameters are kept). `next` moves `offset` by `limit` while that stays
 * within page-depth.ts's bound, and is a cursor link (`after`: the position after this page's last
 * item) past it and after a cursor page, so that a client following next links reaches every item
 * however deep.
 */
export function pageLinks(
  itemsUrl: string,
  filter: Partial<Record<(typeof KEPT_PARAMETERS)[number], string>>,
  page: { start: PageStart; limit: number; returned: number; matched: number; after: string | null },
): Link[] {
  const href = (start: PageStart) => {
    const search = new URLSearchParams();
    for (const name of KEPT_PARAMETERS) {
      const value = filter[name];
      if (value) search.set(name, value);
    }
    search.set('limit', String(page.limit));
    if ('cursor' in start) search.set('cursor', start.cursor);
    else if (start.offset > 0) search.set('offset', String(start.offset));
    return `${itemsUrl}?${search.toString()}`;
  };
  const links: Link[] = [{ href: href(page.start), rel: 'self', type: GEOJSON_TYPE, title: 'this page' }];
  const full = page.returned === page.limit;
  if ('offset' in page.start) {
    const nextOffset = page.start.offset + page.limit;
    const next: PageStart | null =
      !full || nextOffset >= page.matched
        ? null
        : nextOffset <= MAX_PAGE_OFFSET
          ? { offset: nextOffset }
          : page.after === null
            ? null
            : { cursor: page.after };
    if (next) links.push({ href: href(next), rel: 'next', type: GEOJSON_TYPE, title: 'next page' });
    if (page.start.offset > 0) {
      links.push({
        href: href({ offset: Math.max(0, page.start.offset - page.limit) }),
        rel: 'prev',
        type: GEOJSON_TYPE,
        title: 'previous page',
      });
    }
  } else if (full && page.after !== null) {
    links.push({ href: href({ cursor: page.after }), rel: 'next', type: GEOJSON_TYPE, title: 'next page' });
  }
  return links;
}

function singleText(value: unknown, parameter: string): string | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) throw invalid(parameter, `${parameter} must be given once`);
  const text = String(value).trim();
  return text === '' ? null : text;
}

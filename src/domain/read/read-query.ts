import { isSupportedInstant, supportedRangeText } from './date-range.ts';
import { ValidationError } from '../errors.ts';
import { isSlug } from '../collections/slugs.ts';
import { checkPageDepth } from './page-depth.ts';

// The one parser for the query parameters that every /api/v1 read endpoint shares. It turns raw
// query-string values into a validated, normalised filter, or throws a ValidationError naming the
// parameter (the HTTP adapter answers 400 with the spec's error body).

export type Bounds = { north: number; south: number; east: number; west: number };

/** Half-open instant range [from, to); either end may be open. */
export type DateRange = { from: string | null; to: string | null };

/** `eventTimestamp`, or a custom date field inside `data` such as `data.startDate`. */
export type DateField = { kind: 'eventTimestamp' } | { kind: 'data'; path: string[] };

export type EventFilter = {
  catalog: string | null;
  datasets: string[];
  bounds: Bounds | null;
  dates: DateRange;
  dateField: DateField;
};

type SortKey =
  | { field: 'id' | 'eventTimestamp' | 'isValid' | 'dataset' | 'catalog' | 'title' }
  | { field: 'data'; path: string[] };
export type Sort = { key: SortKey; descending: boolean; text: string };

/** The position after an event in a sort (keyset paging, event-cursor.ts): its id and sort value. */
export type KeysetPosition = { id: number; value: string | number | boolean | null };

/** A page by number, or, with `after`, the `limit` events after a position (keyset paging). */
export type Page = { page: number; limit: number; after?: KeysetPosition };

export type GroupBy = 'catalog' | 'dataset';

export type RawQuery = Record<string, unknown>;

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
export const DEFAULT_ZOOM = 10;
export const MAX_ZOOM = 22;
export const DEFAULT_SORT = '-eventTimestamp';

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

export function parseEventFilter(query: RawQuery, options: { boundsRequired?: boolean } = {}): EventFilter {
  const dateField = parseDateField(query.dateField);
  const from = parseDate(query.startDate, 'startDate', 'start');
  const to = parseDate(query.endDate, 'endDate', 'end');
  if (from && to && from >= to) {
    throw invalid('startDate', `startDate must be before endDate (got ${from} and ${to})`);
  }
  const bounds = parseBounds(query.bounds);
  if (!bounds && options.boundsRequired) throw invalid('bounds', 'bounds is required');
  return {
    catalog: parseSlug(query.catalog, 'catalog'),
    datasets: parseSlugList(query.datasets, 'datasets'),
    bounds,
    dates: { from, to },
    dateField,
  };
}

export function parseBounds(value: unknown): Bounds | null {
  const text = optionalText(value, 'bounds');
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('bounds', 'bounds must be JSON such as {"north":55,"south":47,"east":15,"west":5}');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw invalid('bounds', 'bounds must be a JSON object with north, south, east and west');
  }
  const record = parsed as Record<string, unknown>;
  const read = (key: keyof Bounds): number => {
    const number = record[key];
    if (typeof number !== 'number' || !Number.isFinite(number)) {
      throw invalid('bounds', `bounds.${key} must be a number`);
    }
    return number;
  };
  const bounds = { north: read('north'), south: read('south'), east: read('east'), west: read('west') };
  for (const key of ['north', 'south'] as const) {
    if (bounds[key] < -90 || bounds[key] > 90) {
      throw invalid('bounds', `bounds.${key} must be between -90 and 90 (got ${bounds[key]})`);
    }
  }
  for (const key of ['east', 'west'] as const) {
    if (bounds[key] < -180 || bounds[key] > 180) {
      throw invalid('bounds', `bounds.${key} must be between -180 and 180 (got ${bounds[key]})`);
    }
  }
  if (bounds.south > bounds.north) {
    throw invalid(
      'bounds',
      `bounds.south (${bounds.south}) must not be greater than bounds.north (${bounds.north})`,
    );
  }
  return bounds;
}

/**
 * Longitude ranges the bounds cover: one, or two when west > east (the box crosses the antimeridian,
 * as a map panned over the Pacific sends it).
 */
export function longitudeRanges(bounds: Bounds): Array<{ west: number; east: number }> {
  if (bounds.west <= bounds.east) return [{ west: bounds.west, east: bounds.east }];
  return [
    { west: bounds.west, east: 180 },
    { west: -180, east: bounds.east },
  ];
}

/**
 * startDate is inclusive; endDate is inclusive of the instant it names, and a date without a time
 * (`2024-05-31`) includes that whole day (UTC). Both become ends of a half-open range.
 */
export function parseDate(value: unknown, parameter: string, end: 'start' | 'end'): string | null {
  const text = optionalText(value, parameter);
  if (text === null) return null;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  if (!dateOnly && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/.test(text)) {
    throw invalid(parameter, `${parameter} must be an ISO 8601 date or date-time (got "${text}")`);
  }
  const millis = Date.parse(
    dateOnly ? `${text}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`,
  );
  if (Number.isNaN(millis) || !sameCalendarDate(text, millis)) {
    throw invalid(parameter, `${parameter} is not a valid date (got "${text}")`);
  }
  if (!isSupportedInstant(millis)) {
    throw invalid(parameter, `${parameter} is outside the supported ${supportedRangeText()} (got "${text}")`);
  }
  if (end === 'start') return new Date(millis).toISOString();
  const after = millis + (dateOnly ? 86_400_000 : 1);
  // The end of 9999-12-31 is in year 10000, which no stored event reaches (and whose ISO text,
  // "+010000-…", PostgreSQL does not read): an end past the supported range is no end at all.
  if (!isSupportedInstant(after)) return null;
  return new Date(after).toISOString();
}

/** Rejects 2024-02-30, which Date.parse would roll over into March. */
function sameCalendarDate(text: string, millis: number): boolean {
  if (/[+-]\d{2}:?\d{2}$/.test(text) && !text.endsWith('Z')) return true;
  return new Date(millis).toISOString().slice(0, 10) === text.slice(0, 10);
}

export function parseDateField(value: unknown): DateField {
  const text = optionalText(value, 'dateField');
  if (text === null || text === 'eventTimestamp') return { kind: 'eventTimestamp' };
  return { kind: 'data', path: parseDataPath(text, 'dateField') };
}

export function parseDataPath(text: string, parameter: string): string[] {
  const parts = text.split('.');
  if (
    parts[0] !== 'data' ||
    parts.length < 2 ||
    parts.length > 4 ||
    !parts.slice(1).every((p) => FIELD_NAME.test(p))
  ) {
    throw invalid(parameter, `${parameter} must be eventTimestamp or data.<field> (got "${text}")`);
  }
  return parts.slice(1);
}

/** `page` and `limit` of /api/v1/events; a page deeper than page-depth.ts allows is a 400 pointing to `cursor`. */
export function parsePage(query: RawQuery): Page {
  const page = parseInteger(query.page, 'page', { min: 1, max: 1_000_000, fallback: 1 });
  const limit = parseInteger(query.limit, 'limit', { min: 1, max: MAX_LIMIT, fallback: DEFAULT_LIMIT });
  checkPageDepth(
    { skipped: (page - 1) * limit, limit },
    'page',
    'page on with cursor=<nextCursor of the page before> (sort by id, eventTimestamp, dataset or isValid), or narrow the filters',
  );
  return { page, limit };
}

/** Whether `dateField` names a date inside `data` (a valid one; an invalid one is the parser's 400). */
export function isCustomDateField(value: unknown): boolean {
  try {
    return parseDateField(value).kind === 'data';
  } catch {
    return false;
  }
}

export function parseZoom(value: unknown): number {
  return parseInteger(value, 'zoom', { min: 0, max: MAX_ZOOM, fallback: DEFAULT_ZOOM });
}

export function parseGroupBy(value: unknown): GroupBy {
  const text = optionalText(value, 'groupBy');
  if (text === 'catalog' || text === 'dataset') return text;
  throw invalid(
    'groupBy',
    text === null
      ? 'groupBy is required (catalog or dataset)'
      : `groupBy must be catalog or dataset (got "${text}")`,
  );
}

export function parseInteger(
  value: unknown,
  parameter: string,
  range: { min: number; max: number; fallback: number },
): number {
  if (value === undefined || value === null || value === '') return range.fallback;
  const number =
    typeof value === 'number' ? value : /^-?\d+$/.test(String(value)) ? Number(value) : Number.NaN;
  if (!Number.isInteger(number) || number < range.min || number > range.max) {
    throw invalid(
      parameter,
      `${parameter} must be an integer from ${range.min} to ${range.max} (got "${String(value)}")`,
    );
  }
  return number;
}

function parseSlug(value: unknown, parameter: string): string | null {
  const text = optionalText(value, parameter);
  if (text === null) return null;
  if (!isSlug(text)) throw invalid(parameter, `${parameter} must be a slug (got "${text}")`);
  return text;
}

function parseSlugList(value: unknown, parameter: string): string[] {
  if (value === undefined || value === null) return [];
  const values = Array.isArray(value) ? value : [value];
  // `datasets=a,b` is accepted as well as repeating the parameter.
  const slugs = values.flatMap((item) => String(item).split(',')).filter((item) => item !== '');
  if (slugs.length > 200) throw invalid(parameter, `${parameter} accepts at most 200 slugs`);
  for (const slug of slugs) {
    if (!isSlug(slug)) throw invalid(parameter, `${parameter} must be dataset slugs (got "${slug}")`);
  }
  return [...new Set(slugs)];
}

export function optionalText(value: unknown, parameter: string): string | null {
  if (value === undefined || value === null) return null;
  if (Array.isArray(value)) throw invalid(parameter, `${parameter} must be given once`);
  const text = String(value).trim();
  return text === '' ? null : text;
}

export function invalid(parameter: string, message: string): ValidationError {
  return new ValidationError(message, { field: parameter, code: 'INVALID_PARAMETER' });
}

export type Pagination = {
  page: number;
  limit: number;
  totalDocs: number;
  totalPages: number;
  hasNextPage: boolean;
  hasPrevPage: boolean;
  nextPage: number | null;
  prevPage: number | null;
};

export function paginate(page: Page, totalDocs: number): Pagination {
  const totalPages = Math.ceil(totalDocs / page.limit);
  const hasNextPage = page.page < totalPages;
  const hasPrevPage = page.page > 1;
  return {
    page: page.page,
    limit: page.limit,
    totalDocs,
    totalPages,
    hasNextPage,
    hasPrevPage,
    nextPage: hasNextPage ? page.page + 1 : null,
    prevPage: hasPrevPage ? page.page - 1 : null,
  };
}

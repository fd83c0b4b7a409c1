import type { Location, NewEvent } from '../read/events.ts';
import { typedValue } from '../read/events.ts';
import { type AddressPlan, compileAddress, composeAddress } from './geocoding/address-template.ts';
import type { LocatedByGeocoder } from './geocoding/located-by.ts';
import { MAX_CELL_CHARS, MAX_ROW_DATA_CHARS } from './limits.ts';
import { type FieldMapping, parseCoordinatePair, parseDateValue } from './schema.ts';

// Duplicate keys and the conversion of one file row into an event.

export const ID_STRATEGIES = ['external-id', 'content-hash', 'auto'] as const;
export type IdStrategy = (typeof ID_STRATEGIES)[number];

export type DuplicateHandling = 'skip' | 'update';

/**
 * 128-bit content hash of a row (four lanes of 32-bit multiply-xorshift), hex. Pure so that the
 * domain decides duplicate keys without I/O; not for security, only for equality of rows.
 */
export function contentHash(values: readonly string[]): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193 ^ 0x9e3779b9;
  let h3 = 0x85ebca6b;
  let h4 = 0xc2b2ae35;
  const mix = (code: number) => {
    h1 = Math.imul(h1 ^ code, 0x01000193);
    h2 = Math.imul(h2 ^ code, 0x5bd1e995);
    h3 = Math.imul(h3 ^ code, 0x27d4eb2f);
    h4 = Math.imul(h4 ^ code, 0x165667b1);
  };
  for (const value of values) {
    for (let i = 0; i < value.length; i++) mix(value.charCodeAt(i));
    mix(0x1f); // unit separator: ["ab","c"] and ["a","bc"] differ
  }
  const finish = (h: number) => {
    let x = h ^ (h >>> 16);
    x = Math.imul(x, 0x85ebca6b);
    x ^= x >>> 13;
    x = Math.imul(x, 0xc2b2ae35);
    x ^= x >>> 16;
    return (x >>> 0).toString(16).padStart(8, '0');
  };
  return `h${finish(h1)}${finish(h2 ^ h1)}${finish(h3 ^ h2)}${finish(h4 ^ h3)}`;
}

/**
 * The event's unique id in its dataset. external-id: the id column (a row without one has no key
 * and is an error); content-hash: the hash of all values; auto: the id column when the file has
 * one and the row fills it, else the hash.
 */
export function uniqueIdFor(
  values: readonly string[],
  idIndex: number,
  strategy: IdStrategy,
): { ok: true; id: string } | { ok: false; reason: string } {
  const external = idIndex >= 0 ? (values[idIndex] ?? '').trim() : '';
  if (strategy === 'external-id') {
    if (idIndex < 0) return { ok: false, reason: 'no id column for the external-id strategy' };
    if (external === '') return { ok: false, reason: 'the id column is empty' };
    return { ok: true, id: external };
  }
  if (strategy === 'auto' && external !== '') return { ok: true, id: external };
  return { ok: true, id: contentHash(values) };
}

export type RowProblem = { field: string; message: string };

/** A file row that could not be read (an unterminated quote, a row too long), with the reason. */
type MalformedRow = { malformed: string };
/** What a file reader yields: a row of strings, or a row it could not read. */
export type SourceRow = string[] | MalformedRow;

/**
 * Why a row read from a file cannot become an event before its values are even looked at: it was
 * malformed, it has fewer values than the header has columns (in a CSV, a missing delimiter shifts
 * every value after it; a workbook leaves trailing empty cells out, so `shortRowsAllowed`), or a
 * cell or the whole row is over the size bounds. Null when the row's shape is fine.
 */
export function rowShapeProblem(
  headers: readonly string[],
  row: SourceRow,
  options: { shortRowsAllowed: boolean },
): RowProblem | null {
  if (!Array.isArray(row)) return { field: 'row', message: row.malformed };
  if (!options.shortRowsAllowed && row.length < headers.length) {
    return { field: 'row', message: `has ${row.length} values for ${headers.length} columns` };
  }
  let total = 0;
  for (let i = 0; i < row.length; i++) {
    const length = (row[i] as string).length;
    if (length > MAX_CELL_CHARS) {
      return {
        field: headers[i] ?? `column ${i + 1}`,
        message: `is ${length} characters long; a cell holds at most ${MAX_CELL_CHARS}`,
      };
    }
    total += length;
  }
  if (total > MAX_ROW_DATA_CHARS) {
    return {
      field: 'row',
      message: `has ${total} characters of values; one event's data holds at most ${MAX_ROW_DATA_CHARS}`,
    };
  }
  return null;
}

type RowConversion = { ok: true; event: NewEvent } | { ok: false; problem: RowProblem };

export type ColumnPositions = {
  timestamp: number;
  latitude: number;
  longitude: number;
  coordinates: number;
  /** The first column the address reads (-1: no address); `addressPlan` composes it. */
  address: number;
  addressPlan: AddressPlan | null;
  title: number;
  id: number;
};

export function columnPositions(headers: readonly string[], mapping: FieldMapping): ColumnPositions {
  const at = (name: string | undefined) => (name === undefined ? -1 : headers.indexOf(name));
  const addressPlan = mapping.address === undefined ? null : compileAddress(mapping.address, headers);
  return {
    timestamp: at(mapping.timestamp),
    latitude: at(mapping.latitude),
    longitude: at(mapping.longitude),
    coordinates: at(mapping.coordinates),
    address: addressPlan?.columns.find((column) => column >= 0) ?? -1,
    addressPlan,
    title: at(mapping.title),
    id: at(mapping.id),
  };
}

type RowCheck = { ok: true; millis: number; location: Location | null } | { ok: false; problem: RowProblem };

/**
 * Checks a row without building its event (the validate stage reads every row and needs only
 * this): a date, coordinates in range, no values beyond the header. Invalid dates and out-of-range
 * coordinates make the row invalid; a missing location is allowed.
 */
export function checkRow(
  headers: readonly string[],
  values: readonly string[],
  columns: ColumnPositions,
): RowCheck {
  if (values.length > headers.length && values.slice(headers.length).some((v) => v.trim() !== '')) {
    return {
      ok: false,
      problem: { field: 'row', message: `has ${values.length} values for ${headers.length} columns` },
    };
  }
  const rawTime = columns.timestamp >= 0 ? (values[columns.timestamp] ?? '') : '';
  const millis = parseDateValue(rawTime);
  if (Number.isNaN(millis)) {
    return { ok: false, problem: { field: 'timestamp', message: `"${rawTime.slice(0, 60)}" is not a date` } };
  }
  let location: Location | null = null;
  if (columns.latitude >= 0 && columns.longitude >= 0) {
    const lat = (values[columns.latitude] ?? '').trim();
    const lon = (values[columns.longitude] ?? '').trim();
    if (lat !== '' || lon !== '') {
      const latitude = Number(lat);
      const longitude = Number(lon);
      if (lat === '' || !Number.isFinite(latitude) || latitude < -90 || latitude > 90) {
        return { ok: false, problem: { field: 'latitude', message: `"${lat}" is not between -90 and 90` } };
      }
      if (lon === '' || !Number.isFinite(longitude) || longitude < -180 || longitude > 180) {
        return {
          ok: false,
          problem: { field: 'longitude', message: `"${lon}" is not between -180 and 180` },
        };
      }
      // (0,0) is how many exports write "unknown": no location rather than a point in the Gulf of Guinea.
      location = latitude === 0 && longitude === 0 ? null : { latitude, longitude };
    }
  } else if (columns.coordinates >= 0) {
    const raw = (values[columns.coordinates] ?? '').trim();
    if (raw !== '') {
      const pair = parseCoordinatePair(raw);
      if (!pair)
        return {
          ok: false,
          problem: { field: 'coordinates', message: `"${raw.slice(0, 60)}" is not a coordinate pair` },
        };
      location = pair.latitude === 0 && pair.longitude === 0 ? null : pair;
    }
  }
  return { ok: true, millis, location };
}

/**
 * One row to an event (see checkRow); `geocoded` locates a row that has no coordinates of its own,
 * and `locatedBy` says how (kept on the event only when the geocoded location is the one used).
 */
export function rowToEvent(
  headers: readonly string[],
  values: readonly string[],
  columns: ColumnPositions,
  uniqueId: string,
  geocoded: Location | null,
  locatedBy: LocatedByGeocoder | null = null,
): RowConversion {
  const check = checkRow(headers, values, columns);
  if (!check.ok) return check;
  const { millis } = check;
  let location = check.location;
  let located: LocatedByGeocoder | null = null;
  if (!location && geocoded) {
    location = geocoded;
    located = locatedBy;
  }
  // Without a prototype, no column name can reach Object.prototype (assertUsableHeader refuses them too).
  const data: Record<string, unknown> = Object.create(null);
  for (let i = 0; i < headers.length; i++) {
    const header = headers[i] ?? '';
    const value = values[i] ?? '';
    if (header !== '') data[header] = typedValue(value);
    // A value under a column without a name is kept under the column's position, not dropped.
    else if (value.trim() !== '') data[unnamedColumnKey(i)] = typedValue(value);
  }
  const title = columns.title >= 0 ? (values[columns.title] ?? '').trim() || null : null;
  return {
    ok: true,
    event: {
      uniqueId,
      title,
      data,
      location,
      eventTimestamp: new Date(millis).toISOString(),
      isValid: true,
      ...(located ? { locatedBy: located } : {}),
    },
  };
}

/** The data key of a value in an unnamed column: its 1-based position, in parentheses. */
function unnamedColumnKey(index: number): string {
  return `(column ${index + 1})`;
}

/** The address to geocode for a row, when it needs one (no coordinates of its own). */
export function addressToGeocode(values: readonly string[], columns: ColumnPositions): string | null {
  if (columns.address < 0) return null;
  const hasOwn =
    (columns.latitude >= 0 && (values[columns.latitude] ?? '').trim() !== '') ||
    (columns.coordinates >= 0 && (values[columns.coordinates] ?? '').trim() !== '');
  if (hasOwn) return null;
  const address = normaliseAddress(columns.addressPlan ? composeAddress(columns.addressPlan, values) : '');
  return address === '' ? null : address;
}

/** The key an address is geocoded (and cached) under: trimmed, single spaces, case kept for display. */
function normaliseAddress(raw: string): string {
  return raw.trim().replace(/\s+/g, ' ');
}

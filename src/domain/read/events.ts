import { ValidationError } from '../errors.ts';
import type { LocatedByGeocoder } from '../ingest/geocoding/located-by.ts';

export type Location = { longitude: number; latitude: number };

/** An event as it is about to be stored; the store assigns the id. */
export type NewEvent = {
  uniqueId: string;
  title: string | null;
  data: Record<string, unknown>;
  location: Location | null;
  eventTimestamp: string;
  isValid: boolean;
  /** Set when a geocoder located the event (its own coordinates otherwise, or no location). */
  locatedBy?: LocatedByGeocoder | null;
  /** The data row it came from (1-based, after the header), set by an import's create-events stage. */
  sourceRow?: number;
};

/** Largest `data` of one event, as JSON in UTF-8 (POST/PATCH /api/events; imports bound rows: ingest/limits.ts). */
const MAX_EVENT_DATA_BYTES = 256 * 1024;

/** Refuses an event `data` object larger than MAX_EVENT_DATA_BYTES once written as JSON. */
export function checkEventDataSize(data: unknown): void {
  if (data === undefined || data === null) return;
  const bytes = new TextEncoder().encode(JSON.stringify(data)).length;
  if (bytes > MAX_EVENT_DATA_BYTES) {
    throw new ValidationError(
      `data is ${bytes} bytes as JSON; one event's data holds at most ${MAX_EVENT_DATA_BYTES}`,
      { field: 'data', code: 'EVENT_DATA_TOO_LARGE' },
    );
  }
}

/** Numbers in CSV text become numbers so that schema inference and sorting see them as such. */
export function typedValue(raw: string): string | number | boolean | null {
  const text = raw.trim();
  if (text === '') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text)) {
    const number = Number(text);
    if (Number.isFinite(number)) return number;
  }
  if (text === 'true' || text === 'false') return text === 'true';
  return raw;
}

/** An event as the read API shows it (`/api/v1/events`, OGC items). */
export type EventView = {
  id: number;
  /** The value of the column mapped as the title at import; null when none was. */
  title: string | null;
  dataset: { id: number; title: string; catalog: string };
  data: Record<string, unknown>;
  location: { longitude: number; latitude: number } | null;
  eventTimestamp: string;
  isValid: boolean;
};

import { ValidationError } from '../errors.ts';
import { isSlug } from '../collections/slugs.ts';
import { isSupportedInstant } from '../read/date-range.ts';

// A saved view of the Explore page (issue 38 §1–2): what the page's URL holds (map position, filters,
// time window, drawing mode) plus a title and description, kept under a short code so the link
// stays the same when the page's query names change. Public views open for everyone; private ones
// for their owner and admins (src/domain/access.ts#canReadView). Its embed is framable only by the
// sites on its allow-list (`frameAncestors`).

type DrawingMode = 'auto' | 'markers' | 'tiles';

/** The Explore page's state, in the page's own names (web/explore/state.js). */
type ViewState = {
  lng: number;
  lat: number;
  zoom: number;
  catalog: string;
  datasets: string[];
  startDate: string;
  endDate: string;
  mode: DrawingMode;
};

export type SavedView = {
  id: number;
  /** The short code of `/v/{code}` and `/embed/{code}`. */
  code: string;
  ownerId: number;
  title: string;
  description: string;
  state: ViewState;
  isPublic: boolean;
  /** Origins allowed to frame the embed; none: it cannot be framed. */
  embedOrigins: string[];
  /** ISO 8601. */
  createdAt: string;
  updatedAt: string;
};

export type ViewFields = Pick<SavedView, 'title' | 'description' | 'state' | 'isPublic' | 'embedOrigins'>;

const VIEW_LIMITS = { title: 200, description: 2_000, datasets: 50, origins: 20 } as const;
/** Ten characters of 62: 8·10^17 codes, so guessing a private view's code is not a way in. */
export const VIEW_CODE_PATTERN = /^[A-Za-z0-9]{10}$/;
const CODE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// The page's own date pattern (web/explore/state.js), and a date Date.parse reads.
const DATE = /^\d{4}-\d{2}-\d{2}(T[\d:.]{2,12}Z?)?$/;
const MODES: readonly DrawingMode[] = ['auto', 'markers', 'tiles'];

/** A view code from random bytes (the caller's source of randomness); bytes beyond 247 are skipped. */
export function viewCodeFrom(bytes: Uint8Array): string | null {
  let code = '';
  for (const byte of bytes) {
    if (byte >= 248) continue; // 248 = 4·62: keeps every character equally likely
    code += CODE_ALPHABET[byte % 62];
    if (code.length === 10) return code;
  }
  return null;
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(`${field} must be an object`, { field });
  return value as Record<string, unknown>;
}

function boundedNumber(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
    throw new ValidationError(`${field} must be a number from ${min} to ${max}`, { field });
  return value;
}

function text(value: unknown, field: string, max: number, required: boolean): string {
  if (value === undefined && !required) return '';
  if (typeof value !== 'string') throw new ValidationError(`${field} must be a string`, { field });
  const trimmed = value.trim();
  if (required && trimmed === '') throw new ValidationError(`${field} is required`, { field });
  if (trimmed.length > max)
    throw new ValidationError(`${field} must be at most ${max} characters`, { field });
  return trimmed;
}

function date(value: unknown, field: string): string {
  if (value === undefined || value === '') return '';
  if (
    typeof value !== 'string' ||
    !DATE.test(value) ||
    !Number.isFinite(Date.parse(value)) ||
    !isSupportedInstant(Date.parse(value))
  )
    throw new ValidationError(`${field} must be an ISO 8601 date (YYYY-MM-DD)`, { field });
  return value;
}

function slug(value: unknown, field: string): string {
  if (typeof value !== 'string' || !isSlug(value))
    throw new ValidationError(`${field} must be a slug`, { field });
  return value;
}

/** The Explore state of a view, every part checked; what is left out takes the page's default. */
export function parseViewState(raw: unknown): ViewState {
  const input = record(raw, 'state');
  const datasets = input.datasets ?? [];
  if (!Array.isArray(datasets) || datasets.length > VIEW_LIMITS.datasets)
    throw new ValidationError(`state.datasets must be a list of at most ${VIEW_LIMITS.datasets} slugs`, {
      field: 'state.datasets',
    });
  const mode = input.mode ?? 'auto';
  if (!MODES.includes(mode as DrawingMode))
    throw new ValidationError('state.mode must be auto, markers or tiles', { field: 'state.mode' });
  const state: ViewState = {
    lng: boundedNumber(input.lng ?? 0, 'state.lng', -180, 180),
    lat: boundedNumber(input.lat ?? 0, 'state.lat', -85, 85),
    zoom: boundedNumber(input.zoom ?? 1, 'state.zoom', 0, 22),
    catalog: input.catalog === undefined || input.catalog === '' ? '' : slug(input.catalog, 'state.catalog'),
    datasets: [...new Set(datasets.map((value) => slug(value, 'state.datasets')))],
    startDate: date(input.startDate, 'state.startDate'),
    endDate: date(input.endDate, 'state.endDate'),
    mode: mode as DrawingMode,
  };
  if (state.startDate && state.endDate && Date.parse(state.startDate) > Date.parse(state.endDate))
    throw new ValidationError('state.startDate must not be after state.endDate', {
      field: 'state.startDate',
    });
  return state;
}

/**
 * An allow-list entry is an origin (scheme, host, optional port) of http or https, written as the
 * browser sends it; a path, credentials, a wildcard or anything else is refused, so the
 * Content-Security-Policy built from the list holds exactly these origins.
 */
export function parseEmbedOrigins(raw: unknown): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.length > VIEW_LIMITS.origins)
    throw new ValidationError(`embedOrigins must be a list of at most ${VIEW_LIMITS.origins} origins`, {
      field: 'embedOrigins',
    });
  const origins = raw.map((value) => {
    const entry = typeof value === 'string' ? value.trim().replace(/\/$/, '') : '';
    let url: URL | null = null;
    try {
      url = new URL(entry);
    } catch {
      url = null;
    }
    // The URL parser keeps a `*` in a host; a CSP source would read it as a wildcard.
    const plainHost = url !== null && /^([a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/i.test(url.hostname);
    if (!url || !plainHost || !/^https?:$/.test(url.protocol) || url.origin !== entry)
      throw new ValidationError(
        `embedOrigins: ${JSON.stringify(String(value).slice(0, 80))} is not an origin like https://example.org`,
        {
          field: 'embedOrigins',
        },
      );
    return url.origin;
  });
  return [...new Set(origins)];
}

/** A new view's fields from a request body. */
export function parseViewFields(raw: unknown): ViewFields {
  const input = record(raw, 'body');
  if (input.isPublic !== undefined && typeof input.isPublic !== 'boolean')
    throw new ValidationError('isPublic must be true or false', { field: 'isPublic' });
  return {
    title: text(input.title, 'title', VIEW_LIMITS.title, true),
    description: text(input.description, 'description', VIEW_LIMITS.description, false),
    state: parseViewState(input.state ?? {}),
    isPublic: input.isPublic === true,
    embedOrigins: parseEmbedOrigins(input.embedOrigins),
  };
}

/** A change to a view: only the fields sent, each checked as on creation. */
export function parseViewChanges(raw: unknown): Partial<ViewFields> {
  const input = record(raw, 'body');
  const changes: Partial<ViewFields> = {};
  if (input.title !== undefined) changes.title = text(input.title, 'title', VIEW_LIMITS.title, true);
  if (input.description !== undefined)
    changes.description = text(input.description, 'description', VIEW_LIMITS.description, false);
  if (input.state !== undefined) changes.state = parseViewState(input.state);
  if (input.isPublic !== undefined) {
    if (typeof input.isPublic !== 'boolean')
      throw new ValidationError('isPublic must be true or false', { field: 'isPublic' });
    changes.isPublic = input.isPublic;
  }
  if (input.embedOrigins !== undefined) changes.embedOrigins = parseEmbedOrigins(input.embedOrigins);
  return changes;
}

/**
 * The Explore page's query for a view: the same text as the page's own `writeState`
 * (web/explore/state.js, browser code the server does not load), which the unit test holds equal.
 */
export function exploreQuery(state: ViewState): string {
  const params = new URLSearchParams();
  params.set('lng', state.lng.toFixed(4));
  params.set('lat', state.lat.toFixed(4));
  params.set('zoom', state.zoom.toFixed(4));
  if (state.catalog) params.set('catalog', state.catalog);
  if (state.datasets.length > 0) params.set('datasets', state.datasets.join(','));
  if (state.startDate) params.set('startDate', state.startDate);
  if (state.endDate) params.set('endDate', state.endDate);
  if (state.mode !== 'auto') params.set('mode', state.mode);
  return `?${params.toString().replaceAll('%2C', ',')}`;
}

/**
 * The embed's `frame-ancestors`: the allow-list's origins, or 'none' without one (issue 38 §2: no
 * framing without a list). The origins were checked by parseEmbedOrigins, so none carries a space,
 * a semicolon or a quote into the header.
 */
export function frameAncestors(origins: readonly string[]): string {
  return origins.length === 0 ? "'none'" : origins.join(' ');
}

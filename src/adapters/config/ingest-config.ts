import { DEFAULT_MIN_CONFIDENCE } from '../../domain/ingest/geocoding/confidence.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../domain/ingest/failures.ts';

// Ingestion settings from the environment (spec: Retry configuration), read with the same checks
// as the rest of the configuration so that a bad value fails at start-up naming the variable.

/** An online provider (docs/ingestion.md, "Geocoding"); the optional parts default to the public Nominatim's policy. */
export type OnlineGeocoderConfig = {
  url: string;
  /** Interactive imports: requests per second. */
  requestsPerSecond: number;
  timeoutMs: number;
  minConfidence: number;
  /** Scheduled and scraper imports: requests per minute (public Nominatim: 4). */
  scheduledRequestsPerMinute?: number;
  userAgent?: string;
  maxRetryAfterMs?: number;
};

export type GeocoderConfig =
  | { kind: 'off' }
  /** The offline gazetteer, then (when set) an online provider for what it could not resolve. */
  | {
      kind: 'offline';
      minConfidence?: number;
      fallback?: { kind: 'nominatim' | 'photon' } & OnlineGeocoderConfig;
    }
  | ({ kind: 'nominatim' | 'photon' } & OnlineGeocoderConfig);

export type IngestConfig = {
  retry: RetryPolicy;
  /** Largest upload accepted, enforced while the upload streams to disk. */
  maxFileSizeBytes: number;
  /** Rows per event-creation transaction. */
  batchSize: number;
  /**
   * Imports of at least this many rows into an empty dataset store their events without the read
   * API's counts, which one pass adds afterwards (docs/ingestion.md, "Deferred counts").
   */
  deferCountsMinRows: number;
  /**
   * Batches stored at once, each on its own connection, by an import whose counts are deferred
   * (they commit in file order all the same; docs/ingestion.md, "How create-events stores batches").
   */
  deferredWriters: number;
  geocoder: GeocoderConfig;
  /** Worker concurrency for ingest jobs in one process. */
  concurrency: number;
  /** Scheduled URL imports: the fetch limits and whether private addresses may be fetched (tests only). */
  fetch: { maxBytes: number; timeoutMs: number; allowPrivateAddresses: boolean };
};

type Read = <T>(variable: string, parse: (raw: string) => T, fallback: T) => T;

const positiveInteger = (max: number) => (raw: string) => {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > max)
    throw new Error(`must be an integer from 1 to ${max} (got "${raw}")`);
  return value;
};

const multiplier = (raw: string) => {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 1 || value > 10)
    throw new Error(`must be a number from 1 to 10 (got "${raw}")`);
  return value;
};

const flag = (raw: string) => {
  if (raw !== '0' && raw !== '1' && raw !== 'true' && raw !== 'false')
    throw new Error(`must be 1 or 0 (got "${raw}")`);
  return raw === '1' || raw === 'true';
};

const geocoderKind = (raw: string) => {
  if (raw !== 'off' && raw !== 'offline' && raw !== 'nominatim' && raw !== 'photon')
    throw new Error(`must be one of off, offline, nominatim, photon (got "${raw}")`);
  return raw;
};

const onlineKind = (raw: string) => {
  if (raw !== 'off' && raw !== 'nominatim' && raw !== 'photon')
    throw new Error(`must be one of off, nominatim, photon (got "${raw}")`);
  return raw;
};

const confidence = (raw: string) => {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < 0 || value > 1)
    throw new Error(`must be a number from 0 to 1 (got "${raw}")`);
  return value;
};

const userAgent = (raw: string) => {
  if (!/^[\x20-\x7e]{3,200}$/.test(raw)) throw new Error('must be 3 to 200 printable ASCII characters');
  return raw;
};

const httpUrl = (raw: string) => {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('must be an http:// or https:// URL');
  return raw.replace(/\/+$/, '');
};

/** GEOCODER=offline|nominatim|photon|off, GEOCODER_FALLBACK (after offline) and the online provider's settings. */
function loadGeocoderConfig(read: Read): GeocoderConfig {
  const kind = read('GEOCODER', geocoderKind, 'offline');
  if (kind === 'off') return { kind };
  const minConfidence = read('GEOCODER_MIN_CONFIDENCE', confidence, DEFAULT_MIN_CONFIDENCE);
  const onlineKindOf = kind === 'offline' ? read('GEOCODER_FALLBACK', onlineKind, 'off') : kind;
  if (onlineKindOf === 'off') return { kind: 'offline', minConfidence };
  const online = {
    kind: onlineKindOf as 'nominatim' | 'photon',
    url: read(
      'GEOCODER_URL',
      httpUrl,
      onlineKindOf === 'photon' ? 'https://photon.komoot.io' : 'https://nominatim.openstreetmap.org',
    ),
    requestsPerSecond: read('GEOCODER_RATE_LIMIT', positiveInteger(1000), 1),
    scheduledRequestsPerMinute: read('GEOCODER_SCHEDULED_RATE_PER_MINUTE', positiveInteger(60_000), 4),
    timeoutMs: read('GEOCODER_TIMEOUT_MS', positiveInteger(600_000), 10_000),
    maxRetryAfterMs: read('GEOCODER_MAX_RETRY_AFTER_MS', positiveInteger(3_600_000), 60_000),
    userAgent: read('GEOCODER_USER_AGENT', userAgent, DEFAULT_GEOCODER_USER_AGENT),
    minConfidence,
  };
  return kind === 'offline' ? { kind, minConfidence, fallback: online } : online;
}

/** Identifies the software; an operator of the public Nominatim should add a contact (GEOCODER_USER_AGENT). */
export const DEFAULT_GEOCODER_USER_AGENT =
  'Chronomap/0.1 (self-hosted event map; https://github.com/chronomap)';

export function loadIngestConfig(read: Read): IngestConfig {
  return {
    retry: {
      baseDelayMs: read('RETRY_BASE_DELAY_MS', positiveInteger(86_400_000), DEFAULT_RETRY_POLICY.baseDelayMs),
      backoffMultiplier: read('RETRY_BACKOFF_MULTIPLIER', multiplier, DEFAULT_RETRY_POLICY.backoffMultiplier),
      maxDelayMs: read('RETRY_MAX_DELAY_MS', positiveInteger(86_400_000), DEFAULT_RETRY_POLICY.maxDelayMs),
      maxAttempts: read('RETRY_MAX_ATTEMPTS', positiveInteger(100), DEFAULT_RETRY_POLICY.maxAttempts),
    },
    maxFileSizeBytes: read('INGEST_MAX_FILE_SIZE_MB', positiveInteger(100_000), 100) * 1024 * 1024,
    batchSize: read('INGEST_BATCH_SIZE', positiveInteger(100_000), 20_000),
    deferCountsMinRows: read('INGEST_DEFER_COUNTS_MIN_ROWS', positiveInteger(1_000_000_000), 20_000),
    deferredWriters: read('INGEST_DEFERRED_WRITERS', positiveInteger(8), 2),
    concurrency: read('INGEST_CONCURRENCY', positiveInteger(64), 2),
    fetch: {
      maxBytes: read('INGEST_FETCH_MAX_MB', positiveInteger(100_000), 100) * 1024 * 1024,
      timeoutMs: read('INGEST_FETCH_TIMEOUT_MS', positiveInteger(3_600_000), 60_000),
      allowPrivateAddresses: read('INGEST_FETCH_ALLOW_PRIVATE', flag, false),
    },
    geocoder: loadGeocoderConfig(read),
  };
}

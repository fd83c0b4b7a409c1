import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../domain/ingest/failures.ts';

// Ingestion settings from the environment (spec: Retry configuration), read with the same checks
// as the rest of the configuration so that a bad value fails at start-up naming the variable.

export type GeocoderConfig =
  | { kind: 'off' }
  | { kind: 'offline' }
  | { kind: 'nominatim'; url: string; requestsPerSecond: number; timeoutMs: number; minConfidence: number };

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
  if (raw !== 'off' && raw !== 'offline' && raw !== 'nominatim')
    throw new Error(`must be one of off, offline, nominatim (got "${raw}")`);
  return raw;
};

const httpUrl = (raw: string) => {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error('must be an http:// or https:// URL');
  return raw.replace(/\/+$/, '');
};

export function loadIngestConfig(read: Read): IngestConfig {
  const kind = read('GEOCODER', geocoderKind, 'offline');
  const url = read('GEOCODER_URL', httpUrl, 'https://nominatim.openstreetmap.org');
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
    geocoder:
      kind === 'nominatim'
        ? {
            kind,
            url,
            requestsPerSecond: read('GEOCODER_RATE_LIMIT', positiveInteger(1000), 1),
            timeoutMs: read('GEOCODER_TIMEOUT_MS', positiveInteger(600_000), 10_000),
            minConfidence: 0.5,
          }
        : { kind },
  };
}

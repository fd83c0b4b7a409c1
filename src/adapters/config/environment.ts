import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPmtilesArchive } from '../files/basemap-archive.ts';
import { type BudgetConfig, loadBudgetConfig } from './budget-config.ts';
import { type IngestConfig, loadIngestConfig } from './ingest-config.ts';
import { loadOutboxConfig, type OutboxConfig } from './outbox-config.ts';

// Configuration comes from environment variables only. Every variable is validated up front so that
// a bad deployment fails at start-up with a message naming each offending variable.

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

type NodeEnv = 'development' | 'production' | 'test';
type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export type Config = {
  nodeEnv: NodeEnv;
  host: string;
  port: number;
  /** Unset means: start the embedded PostgreSQL cluster under `dataDir`. */
  databaseUrl: string | undefined;
  /** Hot standbys for /api/v1 reads (DATABASE_READ_URLS, comma separated; docs/scaling.md). */
  databaseReadUrls: string[];
  /** A standby whose data may be older than this (REPLICA_MAX_LAG_SECONDS, default 10) answers no reads. */
  replicaMaxLagSeconds: number;
  /** A standby that does not connect or answer the probe within this is taken out (REPLICA_TIMEOUT_MS). */
  replicaTimeoutMs: number;
  dataDir: string;
  logLevel: LogLevel;
  /** Secret for signing session tokens; generated and kept under dataDir outside production. */
  sessionSecret: string | undefined;
  scraperRunnerUrl: string | undefined;
  scraperApiKey: string | undefined;
  /** Tests only: let a git repo's host resolve to loopback when its manifest is read. */
  scraperAllowLoopbackGit: boolean;
  /** Largest request body accepted, in bytes (uploads have their own limit). */
  bodyLimitBytes: number;
  /** Behind a TLS-terminating proxy: trust X-Forwarded-* for client IPs (rate limits) and Secure cookies. */
  trustProxy: boolean;
  /** Ingestion: retry policy, upload size limit, batch size, geocoder (see ingest-config.ts). */
  ingest: IngestConfig;
  /** Statement timeouts per pool and the slow-client timeouts (see budget-config.ts). */
  budgets: BudgetConfig;
  /** Quotas, rate limits and the default trust level (QUOTAS_CONFIG; default config/quotas.yaml). */
  quotasFile: string;
  /**
   * The address clients reach the service at (PUBLIC_BASE_URL), written into every absolute link:
   * OGC API links, TileJSON, webhook URLs (http/public-url.ts). Unset: the address the client used.
   */
  publicBaseUrl: string | undefined;
  /** Explore page: a raster tile URL template drawn under the events (default: country outlines only). */
  mapTileUrl: string | undefined;
  /** Explore page: the attribution the tiles' licence asks for. */
  mapTileAttribution: string | undefined;
  /** Explore page: a PMTiles archive in the Protomaps basemap schema, served and drawn offline. */
  mapBasemapPmtiles: string | undefined;
  /** HTTP processes of `chronomap start` / `chronomap api`, sharing one port (node:cluster). */
  apiProcesses: number;
  /** Bytes of verified /api/v1/events answers each HTTP process keeps (READ_CACHE_MB; 0: none). */
  readCacheBytes: number;
  /**
   * PostgreSQL's parallel workers per statement on the read API's pools (READ_PARALLEL_WORKERS,
   * max_parallel_workers_per_gather; default 0): starting them cost 45-90 ms per statement on a
   * 2-core machine, against reads of 2-50 ms (docs/performance.md, "Parallel workers").
   */
  readParallelWorkers: number;
  /**
   * Where materialised exports are kept (EXPORT_CACHE_DIR, default <dataDir>/exports; shared by the
   * API processes of one host), and their total size (EXPORT_CACHE_MB; 0 turns materialisation off).
   */
  exportCache: { directory: string; maxBytes: number };
  /** Most tiles a PMTiles export of a view holds (EXPORT_PMTILES_MAX_TILES; more: a 400). */
  exportArchiveMaxTiles: number;
  /**
   * Above this many events (estimated by the read model's counts), a first GeoPackage, FlatGeobuf,
   * GeoParquet or PMTiles export of a view runs as a background job (EXPORT_SYNC_MAX_EVENTS).
   */
  exportSyncMaxEvents: number;
  /** Prometheus metrics on a listener of their own (METRICS_BIND=host:port); unset: none. */
  metricsBind: { host: string; port: number } | undefined;
  /** Prometheus metrics at GET /api/metrics for `Authorization: Bearer <METRICS_TOKEN>`; unset: not served there. */
  metricsToken: string | undefined;
  /** Origins that may read the public API cross-origin (CORS_ORIGINS, comma-separated); null: any. */
  corsOrigins: string[] | null;
  /** lock_timeout of migration statements and attempts per file; unset: the migrator's defaults. */
  migrationLocks: { lockTimeoutMs: number | undefined; attempts: number | undefined };
  /** Outgoing mail (SMTP_URL, smtp:// or smtps://; MAIL_FROM); unset: e-mail is off, nothing is queued. */
  mail: { smtpUrl: string; from: string } | undefined;
  /** Retry and lease timing of the subscription deliveries and the e-mail outbox (outbox-config.ts). */
  outboxes: OutboxConfig;
};

/**
 * One HTTP process per core, at most four: each holds its own connection pools (up to 10
 * connections plus pg-boss's), and PostgreSQL allows 100 by default. Tests run one.
 */
function defaultApiProcesses(nodeEnv: NodeEnv): number {
  return nodeEnv === 'test' ? 1 : Math.min(4, availableParallelism());
}

type ConfigProblem = { variable: string; problem: string };

export class ConfigError extends Error {
  readonly problems: ConfigProblem[];

  constructor(problems: ConfigProblem[]) {
    super(
      `Invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.problem}`).join('\n')}\n` +
        'See README.md#configuration for every variable.',
    );
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const NODE_ENVS: readonly NodeEnv[] = ['development', 'production', 'test'];

export function loadConfig(env: Env = process.env): Config {
  const problems: ConfigProblem[] = [];
  const read = <T>(variable: string, parse: (raw: string) => T, fallback: T): T => {
    const raw = env[variable];
    if (raw === undefined || raw === '') return fallback;
    try {
      return parse(raw);
    } catch (error) {
      problems.push({ variable, problem: (error as Error).message });
      return fallback;
    }
  };

  const nodeEnv = read('NODE_ENV', oneOf(NODE_ENVS), 'development');
  const dataDir = read('CHRONOMAP_DATA_DIR', (raw) => path.resolve(raw), path.join(projectRoot, '.data'));
  const config: Config = {
    nodeEnv,
    host: read('HOST', nonEmpty, '127.0.0.1'),
    port: read('PORT', integerBetween(0, 65535), 3000), // 0 picks a free port
    databaseUrl: read('DATABASE_URL', postgresUrl, undefined),
    databaseReadUrls: read(
      'DATABASE_READ_URLS',
      (raw) => raw.split(',').map((url) => postgresUrl(url.trim())),
      [],
    ),
    replicaMaxLagSeconds: read('REPLICA_MAX_LAG_SECONDS', secondsBetween(0, 86_400), 10),
    replicaTimeoutMs: read('REPLICA_TIMEOUT_MS', integerBetween(100, 60_000), 1_000),
    dataDir,
    logLevel: read('LOG_LEVEL', oneOf(LOG_LEVELS), nodeEnv === 'test' ? 'silent' : 'info'),
    sessionSecret: read('SESSION_SECRET', minLength(32), undefined),
    scraperRunnerUrl: read('SCRAPER_RUNNER_URL', httpUrl, undefined),
    scraperApiKey: read('SCRAPER_API_KEY', minLength(16), undefined),
    scraperAllowLoopbackGit: read('SCRAPER_ALLOW_LOOPBACK_GIT', boolean, false),
    bodyLimitBytes: read('BODY_LIMIT_MB', integerBetween(1, 1024), 1) * 1024 * 1024,
    trustProxy: read('TRUST_PROXY', oneOf(['true', 'false'] as const), 'false') === 'true',
    ingest: loadIngestConfig(read),
    budgets: loadBudgetConfig(read),
    quotasFile: read(
      'QUOTAS_CONFIG',
      (raw) => path.resolve(raw),
      path.join(projectRoot, 'config', 'quotas.yaml'),
    ),
    publicBaseUrl: read('PUBLIC_BASE_URL', publicBaseUrl, undefined),
    mapTileUrl: read('MAP_TILE_URL', tileUrlTemplate, undefined),
    mapTileAttribution: read('MAP_TILE_ATTRIBUTION', nonEmpty, undefined),
    mapBasemapPmtiles: read('MAP_BASEMAP_PMTILES', checkPmtilesArchive, undefined),
    apiProcesses: read('API_PROCESSES', integerBetween(1, 64), defaultApiProcesses(nodeEnv)),
    readCacheBytes: read('READ_CACHE_MB', integerBetween(0, 65536), 32) * 1024 * 1024,
    readParallelWorkers: read('READ_PARALLEL_WORKERS', integerBetween(0, 64), 0),
    exportCache: {
      directory: read('EXPORT_CACHE_DIR', (raw) => path.resolve(raw), path.join(dataDir, 'exports')),
      maxBytes: read('EXPORT_CACHE_MB', integerBetween(0, 1_048_576), 2048) * 1024 * 1024,
    },
    exportArchiveMaxTiles: read('EXPORT_PMTILES_MAX_TILES', integerBetween(1, 1_000_000), 20_000),
    exportSyncMaxEvents: read('EXPORT_SYNC_MAX_EVENTS', integerBetween(0, 1_000_000_000), 200_000),
    metricsBind: read('METRICS_BIND', hostAndPort, undefined),
    metricsToken: read('METRICS_TOKEN', minLength(16), undefined),
    corsOrigins: read('CORS_ORIGINS', originList, null),
    migrationLocks: {
      lockTimeoutMs: read('MIGRATION_LOCK_TIMEOUT_MS', integerBetween(10, 600_000), undefined),
      attempts: read('MIGRATION_LOCK_ATTEMPTS', integerBetween(1, 1_000), undefined),
    },
    mail: mailConfig(read('SMTP_URL', smtpUrl, undefined), read('MAIL_FROM', mailFrom, undefined)),
    outboxes: loadOutboxConfig(read),
  };

  for (const variable of missingVariables(config)) {
    if (!problems.some((p) => p.variable === variable)) {
      problems.push({ variable, problem: requiredBecause(variable) });
    }
  }
  if (env.REPLICA_MAX_LAG_MB !== undefined) {
    problems.push({
      variable: 'REPLICA_MAX_LAG_MB',
      problem:
        'is gone: the lag bound is in time now, REPLICA_MAX_LAG_SECONDS (docs/scaling.md, "Read replicas")',
    });
  }
  if (config.mapTileUrl && config.mapBasemapPmtiles) {
    problems.push({ variable: 'MAP_BASEMAP_PMTILES', problem: 'set it or MAP_TILE_URL, not both' });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** Variables that the configuration in force needs but does not have (reported by /api/health too). */
export function missingVariables(config: Config): string[] {
  const missing: string[] = [];
  if (config.nodeEnv === 'production' && !config.sessionSecret) missing.push('SESSION_SECRET');
  if (config.nodeEnv === 'production' && !config.databaseUrl) missing.push('DATABASE_URL');
  if (config.scraperRunnerUrl && !config.scraperApiKey) missing.push('SCRAPER_API_KEY');
  return missing;
}

/**
 * SESSION_SECRET, or outside production a secret generated once and kept in
 * `<dataDir>/session-secret` (so tokens survive restarts). Production must set it.
 */
export function resolveSessionSecret(config: Config): string {
  if (config.sessionSecret) return config.sessionSecret;
  if (config.nodeEnv === 'production')
    throw new ConfigError([{ variable: 'SESSION_SECRET', problem: requiredBecause('SESSION_SECRET') }]);
  const file = path.join(config.dataDir, 'session-secret');
  mkdirSync(config.dataDir, { recursive: true });
  // Written aside then linked into place: when several processes start at once, exactly one link
  // succeeds and nobody ever reads a half-written file.
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, randomBytes(32).toString('base64url'), { mode: 0o600 });
  try {
    linkSync(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(draft);
  }
  const secret = readFileSync(file, 'utf8').trim();
  if (secret.length < 32)
    throw new Error(`${file} holds a secret shorter than 32 characters; delete it to regenerate`);
  return secret;
}

function requiredBecause(variable: string): string {
  switch (variable) {
    case 'SESSION_SECRET':
      return 'is required when NODE_ENV=production (at least 32 characters)';
    case 'DATABASE_URL':
      return 'is required when NODE_ENV=production (the embedded database is for development)';
    case 'SCRAPER_API_KEY':
      return 'is required when SCRAPER_RUNNER_URL is set (the same key as the runner, at least 16 characters)';
    default:
      return 'is required';
  }
}

function nonEmpty(raw: string): string {
  if (raw.trim() === '') throw new Error('must not be blank');
  return raw;
}

function boolean(raw: string): boolean {
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new Error(`must be true or false (got "${raw}")`);
}

function oneOf<T extends string>(allowed: readonly T[]) {
  return (raw: string): T => {
    if (!(allowed as readonly string[]).includes(raw)) {
      throw new Error(`must be one of ${allowed.join(', ')} (got "${raw}")`);
    }
    return raw as T;
  };
}

function integerBetween(min: number, max: number) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) {
      throw new Error(`must be an integer from ${min} to ${max} (got "${raw}")`);
    }
    return value;
  };
}

/** A number of seconds, decimals allowed (`0.5`). */
function secondsBetween(min: number, max: number) {
  return (raw: string): number => {
    const value = Number(raw);
    if (!/^\d+(\.\d+)?$/.test(raw) || value < min || value > max) {
      throw new Error(`must be a number of seconds from ${min} to ${max} (got "${raw}")`);
    }
    return value;
  };
}

/** `host:port` (`[::1]:9464` for IPv6); port 0 picks a free one. */
function hostAndPort(raw: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  const port = Number(match?.[3]);
  if (!match || port > 65535) throw new Error('must be host:port, for example 127.0.0.1:9464');
  return { host: match[1] ?? match[2] ?? '', port };
}

function minLength(length: number) {
  return (raw: string): string => {
    if (raw.length < length) throw new Error(`must be at least ${length} characters long`);
    return raw;
  };
}

const postgresUrl = urlWith(
  ['postgres:', 'postgresql:'],
  'a URL such as postgres://user:password@host:5432/chronomap',
);
const httpUrl = (raw: string) =>
  urlWith(['http:', 'https:'], 'an http:// or https:// URL')(raw).replace(/\/+$/, '');

/** PUBLIC_BASE_URL: scheme, host, optional port and path prefix; no query or fragment; no trailing slash. */
function smtpUrl(raw: string): string {
  const url = new URL(raw);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new Error('must be an smtp:// or smtps:// URL');
  return raw;
}

function mailFrom(raw: string): string {
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(raw))
    throw new Error('must be one address such as chronomap@example.org');
  return raw;
}

/** MAIL_FROM defaults to chronomap@<the SMTP host> so a bare SMTP_URL is enough in development. */
function mailConfig(url: string | undefined, from: string | undefined): Config['mail'] {
  if (url === undefined) return undefined;
  return { smtpUrl: url, from: from ?? `chronomap@${new URL(url).hostname}` };
}

function publicBaseUrl(raw: string): string {
  const url = new URL(httpUrl(raw));
  if (url.search || url.hash || url.username || url.password) {
    throw new Error('must be the address clients reach the service at, such as https://events.example.org');
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
}

/**
 * CORS_ORIGINS: `https://a.example, http://localhost:5173`: origins exactly as browsers send them
 * (scheme, host, optional port; no path). `*` alone means any origin, as when unset.
 */
function originList(raw: string): string[] | null {
  const origins = raw
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  if (origins.length === 1 && origins[0] === '*') return null;
  for (const origin of origins) {
    const url = urlWith(['http:', 'https:'], 'a list of http(s) origins')(origin);
    if (new URL(url).origin !== origin)
      throw new Error(`"${origin}" is not an origin: scheme://host[:port] without a path or trailing slash`);
  }
  if (origins.length === 0) throw new Error('must name at least one origin');
  return origins;
}

/** A raster tile URL template: http(s) with {z}, {x} and {y}, e.g. https://tiles.example.org/{z}/{x}/{y}.png. */
function tileUrlTemplate(raw: string): string {
  urlWith(['http:', 'https:'], 'an http:// or https:// URL template')(raw.replace(/\{[zxy]\}/g, '0'));
  for (const part of ['{z}', '{x}', '{y}']) {
    if (!raw.includes(part))
      throw new Error(`must contain {z}, {x} and {y}; ${part} is missing (got "${raw}")`);
  }
  return raw;
}

function urlWith(protocols: readonly string[], expected: string) {
  return (raw: string): string => {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    if (!url || !protocols.includes(url.protocol)) throw new Error(`must be ${expected} (got "${raw}")`);
    return raw;
  };
}

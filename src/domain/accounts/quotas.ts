import { isUnlimited } from '../access.ts';
import { DomainError, ValidationError } from '../errors.ts';
import type { Role, TrustLevel } from './users.ts';
import { type ConcurrencyPolicy, parseConcurrencyPolicy } from './concurrency-policy.ts';

// Quota rules: which quotas exist, how each is counted, and what a trust level allows. The numbers
// come from config/quotas.yaml (parsed and checked by parseAccessPolicy below).

export const QUOTA_NAMES = [
  'fileUploadsPerDay',
  'urlFetchesPerDay',
  'importJobsPerDay',
  'activeSchedules',
  'totalEvents',
  'eventsPerImport',
  'maxFileSizeMB',
  'draftStorageMB',
  'scraperRepos',
  'scraperRunsPerDay',
] as const;
export type QuotaName = (typeof QUOTA_NAMES)[number];

/**
 * daily: usage counted per UTC day, reset at midnight UTC; total: a lifetime or concurrent count
 * (taken when something is created, released when it goes away); perItem: a ceiling on one item
 * (one import's events, one file's size) with nothing to count.
 */
type QuotaPeriod = 'daily' | 'total' | 'perItem';

/** null means unlimited. */
export type QuotaLimit = number | null;

type QuotaRule = { period: QuotaPeriod; description: string; limits: Record<TrustLevel, QuotaLimit> };

export type RateWindowName = 'burst' | 'hourly' | 'daily';
export type RateWindow = { name: RateWindowName; seconds: number; limit: number };

export type AccessPolicy = {
  defaultTrustLevel: TrustLevel;
  tokenTtlSeconds: number;
  quotas: Record<QuotaName, QuotaRule>;
  /** Request windows by trust level (null: unlimited) and for anonymous callers (per IP). */
  rateLimits: { anonymous: RateWindow[]; byTrustLevel: Record<TrustLevel, RateWindow[] | null> };
  /**
   * Pages of features (the OGC items), counted in rows instead of requests: windows of rows by
   * trust level and for anonymous callers, and the fewest rows a page costs (pageCost, rate-limits.ts).
   */
  pagedRows: PagedRowsPolicy;
  /** Longest a login can be kept alive with refresh-token, counted from the login (seconds). */
  sessionMaxAgeSeconds: number;
  /**
   * Login attempts, counted per client IP and email together, and retries (isLoginRetry) per client
   * IP. Never per email alone: that would let anyone lock an account's owner out by guessing wrong
   * on purpose; and a first try never per IP alone, which locked out everyone behind an address.
   */
  loginAttempts: { perIpAndEmail: RateWindow[]; perIp: RateWindow[] };
  /** Requests that confirm a password (change-email, change-password, delete-account). */
  passwordConfirmations: { perAccount: RateWindow[]; perIp: RateWindow[] };
  /** Places for requests whose cost grows with the data, per client and for the low-trust share (concurrency.ts). */
  concurrency: ConcurrencyPolicy;
};

type PagedRowsPolicy = {
  minimumPerPage: number;
  anonymous: RateWindow[];
  byTrustLevel: Record<TrustLevel, RateWindow[] | null>;
};

export const LIFETIME_PERIOD = '1970-01-01';

/** The key of the period a usage counts against: the UTC day for daily quotas, one lifetime key otherwise. */
export function periodStart(period: QuotaPeriod, now: Date): string {
  return period === 'daily' ? now.toISOString().slice(0, 10) : LIFETIME_PERIOD;
}

/** Next midnight UTC, when daily quotas reset. */
export function nextDailyReset(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** When usage of a quota with this period resets: daily quotas at midnight UTC, the others never. */
export function quotaReset(period: QuotaPeriod, now: Date): Date | null {
  return period === 'daily' ? nextDailyReset(now) : null;
}

/** Who a limit applies to: admins and level 5 are unlimited (isUnlimited). */
export type QuotaSubject = { role: Role; trustLevel: TrustLevel };

export function quotaLimit(policy: AccessPolicy, quota: QuotaName, subject: QuotaSubject): QuotaLimit {
  if (isUnlimited(subject)) return null;
  return policy.quotas[quota].limits[subject.trustLevel];
}

/** The one quota decision: `amount` more fits when the usage after it is within the limit. */
export function fitsQuota(used: number, amount: number, limit: QuotaLimit): boolean {
  return limit === null || used + amount <= limit;
}

/** How much more fits (null: unlimited). */
export function quotaRemaining(used: number, limit: QuotaLimit): number | null {
  return limit === null ? null : Math.max(0, limit - used);
}

const MIB = 1024 * 1024;

/**
 * What a stored draft takes of draftStorageMB: its size in whole MiB, rounded up, and at least 1, so
 * that every stored byte counts and many tiny drafts cannot add up to free storage.
 */
export function draftMegabytes(sizeBytes: number): number {
  return Math.max(1, Math.ceil(sizeBytes / MIB));
}

/**
 * A quota an older config/quotas.yaml does not name yet, with the limits it gets then (the shipped
 * file's), so an operator's file from before keeps working.
 */
const ADDED_LATER: Partial<Record<QuotaName, Raw>> = {
  draftStorageMB: {
    period: 'total',
    description: 'Megabytes of uploads waiting as drafts (start=false)',
    levels: { 0: 10, 1: 100, 2: 250, 3: 500, 4: 2000, 5: 'unlimited' },
  },
};

/** An amount of one quota a request takes (or gives back). */
export type QuotaAmount = { quota: QuotaName; amount: number };

/** One amount per quota, in name order (the order usage rows are locked in, so takers never deadlock). */
export function mergeQuotaAmounts(amounts: QuotaAmount[]): QuotaAmount[] {
  const merged = new Map<QuotaName, number>();
  for (const { quota, amount } of amounts) merged.set(quota, (merged.get(quota) ?? 0) + amount);
  return [...merged]
    .map(([quota, amount]) => ({ quota, amount }))
    .sort((a, b) => a.quota.localeCompare(b.quota));
}

/**
 * Decides a request for several quotas at once, all or nothing: the refusal of the first amount
 * that does not fit, or null when every one fits. perItem quotas compare the amount itself with
 * their ceiling; the others add it to `used` (the current usage, by quota).
 */
export function decideQuotaTake(
  policy: AccessPolicy,
  subject: QuotaSubject,
  amounts: QuotaAmount[],
  used: ReadonlyMap<QuotaName, number>,
  now: Date,
): QuotaExceededError | null {
  for (const { quota, amount } of mergeQuotaAmounts(amounts)) {
    const rule = policy.quotas[quota];
    const limit = quotaLimit(policy, quota, subject);
    const current = rule.period === 'perItem' ? 0 : (used.get(quota) ?? 0);
    if (!fitsQuota(current, amount, limit)) {
      return new QuotaExceededError(quota, {
        limit: limit ?? 0,
        used: current,
        resetsAt: quotaReset(rule.period, now),
        description: rule.description,
      });
    }
  }
  return null;
}

/** A quota refused a request (403, code QUOTA_EXCEEDED): which one, its limit, and when it resets. */
export class QuotaExceededError extends DomainError {
  readonly quota: QuotaName;
  readonly limit: number;
  readonly used: number;
  /** null: the quota never resets by itself (a total or per-item quota). */
  readonly resetsAt: Date | null;

  constructor(
    quota: QuotaName,
    facts: { limit: number; used: number; resetsAt: Date | null; description?: string },
    message?: string,
  ) {
    const what = facts.description
      ? `: ${facts.description.toLowerCase()} is limited to ${facts.limit} for your trust level`
      : ` (limit ${facts.limit})`;
    super(
      'quota_exceeded',
      message ??
        `Quota ${quota} exceeded${what}` +
          (facts.resetsAt ? `; it resets at ${facts.resetsAt.toISOString()}` : ''),
      { code: 'QUOTA_EXCEEDED' },
    );
    this.name = 'QuotaExceededError';
    this.quota = quota;
    this.limit = facts.limit;
    this.used = facts.used;
    this.resetsAt = facts.resetsAt;
  }
}

// ---- parsing config/quotas.yaml ----

const LEVELS: TrustLevel[] = [0, 1, 2, 3, 4, 5];
const WINDOW_NAMES: RateWindowName[] = ['burst', 'hourly', 'daily'];

type Raw = Record<string, unknown>;

function object(value: unknown, where: string): Raw {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError(`${where} must be a mapping`);
  }
  return value as Raw;
}

function count(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new ValidationError(`${where} must be a whole number >= 0 (got ${JSON.stringify(value)})`);
  }
  return value;
}

function limit(value: unknown, where: string): QuotaLimit {
  return value === 'unlimited' ? null : count(value, where);
}

function level(value: unknown, where: string): TrustLevel {
  const n = count(value, where);
  if (n > 5) throw new ValidationError(`${where} must be a trust level from 0 to 5`);
  return n as TrustLevel;
}

function windows(value: unknown, where: string): RateWindow[] {
  const raw = object(value, where);
  const result: RateWindow[] = [];
  for (const [name, spec] of Object.entries(raw)) {
    if (!WINDOW_NAMES.includes(name as RateWindowName)) {
      throw new ValidationError(`${where}.${name}: unknown window (use ${WINDOW_NAMES.join(', ')})`);
    }
    const window = object(spec, `${where}.${name}`);
    const seconds = count(window.seconds, `${where}.${name}.seconds`);
    if (seconds < 1) throw new ValidationError(`${where}.${name}.seconds must be at least 1`);
    result.push({
      name: name as RateWindowName,
      seconds,
      limit: count(window.limit, `${where}.${name}.limit`),
    });
  }
  return result.sort((a, b) => a.seconds - b.seconds);
}

function windowsByLevel(value: unknown, where: string): Record<TrustLevel, RateWindow[] | null> {
  const byLevelRaw = object(value, where);
  const byTrustLevel = {} as Record<TrustLevel, RateWindow[] | null>;
  for (const l of LEVELS) {
    const spec = byLevelRaw[l];
    byTrustLevel[l] = spec === 'unlimited' ? null : windows(spec, `${where}.${l}`);
  }
  return byTrustLevel;
}

const rowWindows = (burst: number, hourly: number, daily: number): Raw => ({
  burst: { seconds: 10, limit: burst },
  hourly: { seconds: 3600, limit: hourly },
  daily: { seconds: 86400, limit: daily },
});

/** The shipped pagedRows, for a config/quotas.yaml from before it (issue 35). */
const PAGED_ROWS_BEFORE: Raw = {
  minimumPerPage: 10,
  anonymous: rowWindows(10_000, 120_000, 500_000),
  byTrustLevel: {
    0: rowWindows(5_000, 50_000, 200_000),
    1: rowWindows(10_000, 150_000, 600_000),
    2: rowWindows(20_000, 300_000, 1_500_000),
    3: rowWindows(40_000, 600_000, 3_000_000),
    4: rowWindows(100_000, 2_000_000, 10_000_000),
    5: 'unlimited',
  },
};

/** Checks the parsed YAML and names the first offending key. */
export function parseAccessPolicy(input: unknown): AccessPolicy {
  const raw = object(input, 'config');
  const quotasRaw = object(raw.quotas, 'quotas');
  const quotas = {} as Record<QuotaName, QuotaRule>;
  for (const name of QUOTA_NAMES) {
    const rule = object(quotasRaw[name] ?? ADDED_LATER[name], `quotas.${name}`);
    const period = rule.period;
    if (period !== 'daily' && period !== 'total' && period !== 'perItem') {
      throw new ValidationError(`quotas.${name}.period must be daily, total or perItem`);
    }
    const levels = object(rule.levels, `quotas.${name}.levels`);
    const limits = {} as Record<TrustLevel, QuotaLimit>;
    for (const l of LEVELS) limits[l] = limit(levels[l], `quotas.${name}.levels.${l}`);
    quotas[name] = { period, description: String(rule.description ?? name), limits };
  }
  const unknown = Object.keys(quotasRaw).filter((key) => !QUOTA_NAMES.includes(key as QuotaName));
  if (unknown.length > 0) throw new ValidationError(`quotas: unknown quota ${unknown.join(', ')}`);

  const rates = object(raw.rateLimits, 'rateLimits');
  const rows = object(raw.pagedRows ?? PAGED_ROWS_BEFORE, 'pagedRows');
  const minimumPerPage = count(rows.minimumPerPage, 'pagedRows.minimumPerPage');
  if (minimumPerPage < 1) throw new ValidationError('pagedRows.minimumPerPage must be at least 1');
  const ttl = count(raw.tokenTtlSeconds, 'tokenTtlSeconds');
  if (ttl < 60) throw new ValidationError('tokenTtlSeconds must be at least 60');
  const maxAge = count(raw.sessionMaxAgeSeconds, 'sessionMaxAgeSeconds');
  if (maxAge < ttl) throw new ValidationError('sessionMaxAgeSeconds must be at least tokenTtlSeconds');
  const logins = object(raw.loginAttempts, 'loginAttempts');
  if ('perEmail' in logins) {
    throw new ValidationError(
      'loginAttempts.perEmail is no longer read (it let attackers lock owners out): use perIpAndEmail',
    );
  }
  const confirmations = object(raw.passwordConfirmations, 'passwordConfirmations');
  return {
    defaultTrustLevel: level(raw.defaultTrustLevel, 'defaultTrustLevel'),
    tokenTtlSeconds: ttl,
    quotas,
    rateLimits: {
      anonymous: windows(rates.anonymous, 'rateLimits.anonymous'),
      byTrustLevel: windowsByLevel(rates.byTrustLevel, 'rateLimits.byTrustLevel'),
    },
    pagedRows: {
      minimumPerPage,
      anonymous: windows(rows.anonymous, 'pagedRows.anonymous'),
      byTrustLevel: windowsByLevel(rows.byTrustLevel, 'pagedRows.byTrustLevel'),
    },
    sessionMaxAgeSeconds: maxAge,
    loginAttempts: {
      perIpAndEmail: windows(logins.perIpAndEmail, 'loginAttempts.perIpAndEmail'),
      perIp: windows(logins.perIp, 'loginAttempts.perIp'),
    },
    passwordConfirmations: {
      perAccount: windows(confirmations.perAccount, 'passwordConfirmations.perAccount'),
      perIp: windows(confirmations.perIp, 'passwordConfirmations.perIp'),
    },
    concurrency: parseConcurrencyPolicy(raw.concurrentRequests),
  };
}

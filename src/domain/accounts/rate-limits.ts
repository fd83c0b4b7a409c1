import { DomainError } from '../errors.ts';
import type { RateWindow, RateWindowName } from './quotas.ts';

// Fixed-window rate limiting: each window (burst, hourly, daily) counts hits in the slice of time
// that starts at a multiple of its length. The counting happens in the database; this decides.

export function windowStart(window: RateWindow, now: Date): Date {
  const ms = window.seconds * 1000;
  return new Date(Math.floor(now.getTime() / ms) * ms);
}

export function windowReset(window: RateWindow, now: Date): Date {
  return new Date(windowStart(window, now).getTime() + window.seconds * 1000);
}

export type WindowCount = { window: RateWindow; hits: number };

/** What a window counts: requests (the default) or rows of pages (pagedRows). */
type RateUnit = 'requests' | 'rows';

export type RateDecision =
  | { allowed: true; window?: RateWindowName; unit?: RateUnit; limit: number; remaining: number; reset: Date }
  | {
      allowed: false;
      limitType: RateWindowName;
      unit?: RateUnit;
      limit: number;
      remaining: 0;
      reset: Date;
      retryAfterSeconds: number;
    };

export type RateRefusal = Extract<RateDecision, { allowed: false }>;

/**
 * A refusal by the `limitType` window of `limit`, free again at `reset`: what every 429 says, the
 * request windows' and the daily runs quota's alike. Retry-After is at least a second, never 0.
 */
export function rateRefusal(limitType: RateWindowName, limit: number, reset: Date, now: Date): RateRefusal {
  return {
    allowed: false,
    limitType,
    limit,
    remaining: 0,
    reset,
    retryAfterSeconds: Math.max(1, Math.ceil((reset.getTime() - now.getTime()) / 1000)),
  };
}

/**
 * Denied when any window is over its limit; the window named is the one that frees up last. When allowed, the
 * headers describe the window with the fewest requests left.
 */
export function decideRate(counts: WindowCount[], now: Date): RateDecision {
  const exceeded = counts
    .filter((c) => c.hits > c.window.limit)
    .sort((a, b) => windowReset(b.window, now).getTime() - windowReset(a.window, now).getTime());
  // When several windows are full, the caller must wait for the one that frees up last.
  const blocking = exceeded[0];
  if (blocking)
    return rateRefusal(blocking.window.name, blocking.window.limit, windowReset(blocking.window, now), now);
  let tightest: WindowCount | undefined;
  for (const c of counts) {
    if (!tightest || c.window.limit - c.hits < tightest.window.limit - tightest.hits) tightest = c;
  }
  if (!tightest) return { allowed: true, limit: 0, remaining: 0, reset: now };
  return {
    allowed: true,
    window: tightest.window.name,
    limit: tightest.window.limit,
    remaining: Math.max(0, tightest.window.limit - tightest.hits),
    reset: windowReset(tightest.window, now),
  };
}

/**
 * Whether a login attempt is a retry: its (address, account) pair was tried before within the pair's
 * shortest window (`pair`, the counts after this attempt's hit). Only retries count against the
 * address's cap (loginAttempts.perIp): a first try for an account never waits for what others
 * behind the same address did.
 */
export function isLoginRetry(pair: WindowCount[]): boolean {
  const shortest = [...pair].sort((a, b) => a.window.seconds - b.window.seconds)[0];
  return shortest !== undefined && shortest.hits > 1;
}

/** A route whose pages are counted in rows: its page size when none is asked, and its cap. */
export type PagedRoute = { defaultLimit: number; maxLimit: number };

/**
 * What one page costs in the pagedRows windows: the rows it may return (the `limit` asked, else the
 * route's default, clamped to the route's cap as the route clamps it), and never fewer than
 * `minimumPerPage`, so a page is never free and tiny pages cannot outnumber the request windows'
 * pace by more than the row budget divided by the minimum.
 */
export function pageCost(limitAsked: unknown, route: PagedRoute, minimumPerPage: number): number {
  const asked = typeof limitAsked === 'number' ? limitAsked : Number(limitAsked);
  const rows = Number.isInteger(asked) && asked >= 1 ? Math.min(asked, route.maxLimit) : route.defaultLimit;
  return Math.max(minimumPerPage, rows);
}

/** Every refusal answered with the spec's rate-limit error (429): the HTTP adapter builds it from `decision`. */
export class RateLimitedError extends DomainError {
  readonly decision: RateRefusal;

  constructor(decision: RateRefusal, message?: string, code = 'RATE_LIMITED') {
    super(
      'rate_limited',
      message ??
        `Too many requests: the ${decision.limitType} limit of ${decision.limit} is used up; retry after ${decision.reset.toISOString()}`,
      { code },
    );
    this.name = 'RateLimitedError';
    this.decision = decision;
  }
}

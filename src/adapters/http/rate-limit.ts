import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isUnlimited } from '../../domain/access.ts';
import type { AccessPolicy } from '../../domain/accounts/quotas.ts';
import type { RateWindow } from '../../domain/accounts/quotas.ts';
import {
  decideRate,
  type PagedRoute,
  pageCost,
  type RateDecision,
  RateLimitedError,
  type RateRefusal,
} from '../../domain/accounts/rate-limits.ts';
import type { RateLimitCounter } from '../../ports/accounts/rate-limit-counter.ts';
import type { Clock } from '../../ports/clock.ts';
import { viewerOf } from './viewer.ts';

// Request rate limits kept in Postgres, so every API process counts the same requests (batched: see
// postgresRateLimitCounter for how far over a limit several processes can go). Routes opt
// in with `config: { rateLimit: true }`; everything under /api/v1 is limited without asking.
// Logged-in callers are counted per account (windows by trust level), anonymous ones per IP.

declare module 'fastify' {
  interface FastifyContextConfig {
    rateLimit?: boolean;
    /** Its pages are counted in rows (config/quotas.yaml pagedRows), not in the request windows. */
    pagedRows?: PagedRoute;
  }
}

const RATE_LIMITED_PREFIXES = ['/api/v1/'];

type RateLimitDeps = { counter: RateLimitCounter; policy: AccessPolicy; clock: Clock };

function applies(request: FastifyRequest): boolean {
  return rateLimitApplies(request.url.split('?')[0] ?? '', request.routeOptions.config);
}

/** The one rule, shared with the OpenAPI document (which shows a 429 where this says yes). */
export function rateLimitApplies(path: string, config: { rateLimit?: boolean } | undefined): boolean {
  if (config?.rateLimit) return true;
  return RATE_LIMITED_PREFIXES.some((prefix) => path.startsWith(prefix));
}

/** The name of a window in the IETF fields: `burst`, or `rows-burst` for a window of rows. */
function policyName(window: string, unit: RateDecision['unit']): string {
  return unit === 'rows' ? `rows-${window}` : window;
}

/**
 * `RateLimit-Policy` of draft-ietf-httpapi-ratelimit-headers: every window that counts this request,
 * `"<name>";q=<limit>;w=<seconds>`. Set before the decision, so a 429 carries it too.
 */
function setRatePolicy(reply: FastifyReply, windows: RateWindow[], unit: RateDecision['unit']): void {
  reply.header(
    'RateLimit-Policy',
    windows.map((w) => `"${policyName(w.name, unit)}";q=${w.limit};w=${w.seconds}`).join(', '),
  );
}

/**
 * The spec's `X-RateLimit-*` (Reset an ISO date, as the spec fixes it) and the IETF draft's
 * `RateLimit: "<window>";r=<remaining>;t=<seconds to reset>` for the window with the fewest left.
 */
function setRateHeaders(reply: FastifyReply, decision: RateDecision, now: Date): void {
  reply.header('X-RateLimit-Limit', String(decision.limit));
  reply.header('X-RateLimit-Remaining', String(decision.remaining));
  reply.header('X-RateLimit-Reset', decision.reset.toISOString());
  const window = decision.allowed ? decision.window : decision.limitType;
  if (window === undefined) return;
  const seconds = decision.allowed
    ? Math.max(0, Math.ceil((decision.reset.getTime() - now.getTime()) / 1000))
    : decision.retryAfterSeconds;
  reply.header('RateLimit', `"${policyName(window, decision.unit)}";r=${decision.remaining};t=${seconds}`);
}

/** A refusal's headers: `Retry-After` in seconds and `X-RateLimit-*` (Remaining 0). HTML pages that answer 429 send these too. */
export function setRefusalHeaders(reply: FastifyReply, decision: RateRefusal): FastifyReply {
  setRateHeaders(reply, decision, decision.reset);
  return reply.header('Retry-After', String(decision.retryAfterSeconds));
}

/**
 * The spec's 429, built here and nowhere else: `{success: false, error, message, limitType, retryAfter}`
 * plus the headers, for every RateLimitedError (the request windows of the hook below, login
 * throttling, the daily scraper runs quota on the run and webhook routes, the data exports a day);
 * the error handler calls it.
 */
export function sendRateLimited(reply: FastifyReply, error: RateLimitedError): FastifyReply {
  const { decision } = error;
  return setRefusalHeaders(reply, decision)
    .status(429)
    .send({
      success: false,
      error: 'Rate limit exceeded',
      message: error.message,
      code: error.code ?? 'RATE_LIMITED',
      limitType: decision.limitType,
      retryAfter: decision.reset.toISOString(),
    });
}

export function installRateLimits(app: FastifyInstance, deps: RateLimitDeps): void {
  // Hits counted in memory and not written yet are written before the database pool closes.
  app.addHook('onClose', async () => deps.counter.flush());
  // preHandler: after authentication (onRequest) and after validation, so bad requests cost nothing.
  app.addHook('preHandler', async (request, reply) => {
    if (!applies(request)) return;
    const viewer = viewerOf(request);
    if (viewer && isUnlimited(viewer)) return;
    const paged = request.routeOptions.config.pagedRows;
    const limits = paged ? deps.policy.pagedRows : deps.policy.rateLimits;
    const windows = viewer ? limits.byTrustLevel[viewer.trustLevel] : limits.anonymous;
    if (!windows || windows.length === 0) return;
    const unit = paged ? ('rows' as const) : ('requests' as const);
    // Each API key has its own budget (its owner's trust level's windows); quotas stay the owner's.
    const who = viewer ? (viewer.key ? `key:${viewer.key.id}` : `user:${viewer.id}`) : `ip:${request.ip}`;
    const key = paged ? `rows:${who}` : who;
    const amount = paged
      ? pageCost((request.query as { limit?: unknown }).limit, paged, deps.policy.pagedRows.minimumPerPage)
      : 1;
    const now = deps.clock.now();
    setRatePolicy(reply, windows, unit);
    const decision = { ...decideRate(await deps.counter.hit(key, windows, now, amount), now), unit };
    if (!decision.allowed) throw new RateLimitedError(decision, rateMessage(decision.limitType));
    setRateHeaders(reply, decision, now);
  });
}

function rateMessage(limitType: string): string {
  return `Too many requests: the ${limitType} rate limit is reached; retry after the time in retryAfter`;
}

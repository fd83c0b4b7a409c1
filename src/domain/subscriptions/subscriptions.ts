import { backoffMs } from '../backoff.ts';
import type { TrustLevel } from '../accounts/users.ts';
import { DomainError, ValidationError } from '../errors.ts';
import { parseEventFilter, type EventFilter } from '../read/read-query.ts';
import { parseViewState, type SavedView } from '../site/saved-views.ts';

// A subscription (issue 39 §2): the read API's filter of a saved view or of the Explore page
// (catalog, datasets, bounds, dates) plus a delivery channel. Its changes are matched once per
// stored batch against every subscription (src/adapters/postgres/subscriptions/matcher.ts) and
// delivered at least once, each delivery under one id kept across its retries.

type Channel = { kind: 'webhook'; url: string } | { kind: 'email'; emailAddressId: string };

export type Subscription = {
  id: number;
  ownerId: number;
  /** The API key it was created with (null: a session); revoking the key stops its deliveries. */
  apiKeyId: number | null;
  name: string;
  /** The saved view it was made from, if any (its code). */
  viewCode: string | null;
  filter: EventFilter;
  channel: Channel;
  enabled: boolean;
  consecutiveFailures: number;
  disabledReason: string | null;
  createdAt: string;
};

export type SubscriptionFields = {
  name: string;
  filter: EventFilter;
  channel: Channel;
  viewCode: string | null;
};

/** How many subscriptions an account may keep, by trust level (admins and level 5 unlimited). */
export const SUBSCRIPTIONS_BY_TRUST_LEVEL: Record<TrustLevel, number> = {
  0: 0,
  1: 5,
  2: 20,
  3: 100,
  4: 500,
  5: Infinity,
};

/**
 * A delivery's attempts before it is given up (about ten minutes of backoff from 5 s), and the failed
 * attempts in a row, of any of its deliveries, that disable a subscription: the same number, so a
 * delivery given up has disabled its subscription, whose other deliveries then wait for it to be
 * enabled again instead of failing one after another.
 */
export const DELIVERY_MAX_ATTEMPTS = 8;
export const FAILURES_BEFORE_DISABLE = 8;
/** The changes one webhook POST carries at most; more go in the next delivery. */
export const DELIVERY_BATCH_SIZE = 100;
/** The attempts kept in a subscription's delivery log; older ones are removed as new ones come. */
export const DELIVERY_LOG_SIZE = 100;

/**
 * The wait before attempt `attempt + 1` (attempt ≥ 1): exponential from `baseMs`, capped at an
 * hour, with full jitter (a random share of it, from the caller's source), so that receivers that
 * failed together are not all retried at the same moment.
 */
export function retryDelayMs(attempt: number, random: number, baseMs = 5_000): number {
  return backoffMs(attempt, baseMs, random);
}

function record(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ValidationError(`${field} must be an object`, { field });
  return value as Record<string, unknown>;
}

function name(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || value.trim().length > 200)
    throw new ValidationError('name must be a text of 1 to 200 characters', { field: 'name' });
  return value.trim();
}

/** A webhook's URL: http(s), no credentials, at most 2,000 characters (where it resolves is the SSRF guard's). */
function parseWebhookUrl(value: unknown): string {
  if (typeof value !== 'string' || value.length > 2_000)
    throw new ValidationError('url must be a URL of at most 2000 characters', { field: 'url' });
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError(`"${value}" is not a URL`, { field: 'url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ValidationError('url must start with http:// or https://', { field: 'url' });
  if (url.username || url.password)
    throw new ValidationError('credentials in the URL are not accepted', { field: 'url' });
  return url.toString();
}

function emailAddressId(id: unknown): string {
  if (typeof id !== 'string' || id === '' || id.length > 100)
    throw new ValidationError('emailAddressId is required for the email channel', {
      field: 'emailAddressId',
    });
  return id;
}

/**
 * An e-mail subscription's address must be one of the owner's confirmed addresses (double
 * opt-in): refused as bad input otherwise, whether the id is someone else's, unconfirmed or made up.
 */
export function requireConfirmedAddress(id: string, confirmed: readonly { id: string }[]): void {
  if (!confirmed.some((address) => address.id === id))
    throw new ValidationError('emailAddressId must be one of your confirmed e-mail addresses', {
      field: 'emailAddressId',
    });
}

function channel(raw: Record<string, unknown>): Channel {
  const kind = raw.channel ?? 'webhook';
  if (kind === 'webhook') return { kind, url: parseWebhookUrl(raw.url) };
  if (kind === 'email') return { kind, emailAddressId: emailAddressId(raw.emailAddressId) };
  throw new ValidationError('channel must be webhook or email', { field: 'channel' });
}

/** The read API's filter from a subscription body's `filter` (the query names of /api/v1). */
function parseSubscriptionFilter(raw: unknown): EventFilter {
  if (raw === undefined) return parseEventFilter({});
  const input = record(raw, 'filter');
  const bounds = input.bounds === undefined ? undefined : JSON.stringify(input.bounds);
  const filter = parseEventFilter({
    ...(typeof input.catalog === 'string' ? { catalog: input.catalog } : {}),
    ...(Array.isArray(input.datasets) ? { datasets: input.datasets.map(String) } : {}),
    ...(bounds === undefined ? {} : { bounds }),
    ...(typeof input.startDate === 'string' ? { startDate: input.startDate } : {}),
    ...(typeof input.endDate === 'string' ? { endDate: input.endDate } : {}),
  });
  for (const key of Object.keys(input))
    if (!['catalog', 'datasets', 'bounds', 'startDate', 'endDate'].includes(key))
      throw new ValidationError(`filter.${key} is not a filter of subscriptions`, { field: `filter.${key}` });
  return filter;
}

/** A saved view's filters as the read API's: its catalog, datasets and time window (its map box is the caller's). */
export function filterOfView(view: SavedView, bounds: unknown): EventFilter {
  const state = parseViewState(view.state);
  return parseSubscriptionFilter({
    ...(state.catalog ? { catalog: state.catalog } : {}),
    datasets: state.datasets,
    ...(bounds === undefined ? {} : { bounds }),
    ...(state.startDate ? { startDate: state.startDate } : {}),
    ...(state.endDate ? { endDate: state.endDate } : {}),
  });
}

/** A new subscription's fields; `filter` is the view's when the body names one (resolved by the caller). */
export function parseSubscriptionFields(body: unknown, viewFilter: EventFilter | null): SubscriptionFields {
  const input = record(body, 'body');
  return {
    name: name(input.name),
    filter: viewFilter ?? parseSubscriptionFilter(input.filter),
    channel: channel(input),
    viewCode: typeof input.view === 'string' ? input.view : null,
  };
}

/** The changes a PATCH may make: name, filter, URL, and `enabled: true` (re-enabling resets the failures). */
export function parseSubscriptionChanges(body: unknown): {
  name?: string;
  filter?: EventFilter;
  url?: string;
  emailAddressId?: string;
  enabled?: boolean;
} {
  const input = record(body, 'body');
  const changes: ReturnType<typeof parseSubscriptionChanges> = {};
  if (input.name !== undefined) changes.name = name(input.name);
  if (input.filter !== undefined) changes.filter = parseSubscriptionFilter(input.filter);
  if (input.url !== undefined) changes.url = parseWebhookUrl(input.url);
  if (input.emailAddressId !== undefined) changes.emailAddressId = emailAddressId(input.emailAddressId);
  if (input.enabled !== undefined) {
    if (typeof input.enabled !== 'boolean')
      throw new ValidationError('enabled must be true or false', { field: 'enabled' });
    changes.enabled = input.enabled;
  }
  return changes;
}

export function subscriptionQuotaError(limit: number): DomainError {
  return new DomainError(
    'quota_exceeded',
    `subscriptions are limited to ${limit} for your trust level: delete one first`,
    { code: 'QUOTA_EXCEEDED' },
  );
}

import { Type } from 'typebox';
import type { Bounds, EventFilter } from '../../../domain/read/read-query.ts';
import type { Subscription } from '../../../domain/subscriptions/subscriptions.ts';
import { Nullable, sql } from '../database.ts';

// A subscription's row and its mapping, shared by the store and the delivery queue. The filter is
// kept as columns the matcher indexes: the box as a geometry (two boxes across the antimeridian,
// as the read API reads it) beside the box as given.

export const SubscriptionRow = Type.Object({
  id: Type.Number(),
  owner_id: Type.Number(),
  api_key_id: Nullable(Type.Number()),
  view_code: Nullable(Type.String()),
  name: Type.String(),
  channel: Type.Union([Type.Literal('webhook'), Type.Literal('email')]),
  url: Nullable(Type.String()),
  secret: Nullable(Type.String()),
  email_address_id: Nullable(Type.String()),
  catalog: Nullable(Type.String()),
  datasets: Type.Array(Type.String()),
  box: Nullable(Type.Unknown()),
  starts_at: Nullable(Type.String()),
  ends_at: Nullable(Type.String()),
  enabled: Type.Boolean(),
  consecutive_failures: Type.Number(),
  disabled_reason: Nullable(Type.String()),
  created_at: Type.String(),
});

type Row = {
  id: number;
  owner_id: number;
  api_key_id: number | null;
  view_code: string | null;
  name: string;
  channel: 'webhook' | 'email';
  url: string | null;
  secret: string | null;
  email_address_id: string | null;
  catalog: string | null;
  datasets: string[];
  box: unknown;
  starts_at: string | null;
  ends_at: string | null;
  enabled: boolean;
  consecutive_failures: number;
  disabled_reason: string | null;
  created_at: string;
};

const iso = sql.fragment;
export const SUBSCRIPTION_COLUMNS = iso`s.id, s.owner_id, s.api_key_id, s.view_code, s.name, s.channel,
  s.url, s.secret, s.email_address_id, s.catalog, s.datasets, s.box,
  to_char(s.starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as starts_at,
  to_char(s.ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ends_at,
  s.enabled, s.consecutive_failures, s.disabled_reason,
  to_char(s.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at`;

export function subscriptionOf(r: Row): Subscription & { secret: string | null } {
  const filter: EventFilter = {
    catalog: r.catalog,
    datasets: r.datasets,
    bounds: (r.box as Bounds | null) ?? null,
    dates: { from: r.starts_at, to: r.ends_at },
    dateField: { kind: 'eventTimestamp' },
  };
  return {
    id: r.id,
    ownerId: r.owner_id,
    apiKeyId: r.api_key_id,
    name: r.name,
    viewCode: r.view_code,
    filter,
    channel:
      r.channel === 'webhook'
        ? { kind: 'webhook', url: r.url ?? '' }
        : { kind: 'email', emailAddressId: r.email_address_id ?? '' },
    enabled: r.enabled,
    consecutiveFailures: r.consecutive_failures,
    disabledReason: r.disabled_reason,
    createdAt: r.created_at,
    secret: r.secret,
  };
}

/** The box as a geometry: one envelope, or two when it crosses the antimeridian (west > east). */
function boundsGeometry(bounds: Bounds | null) {
  if (!bounds) return sql.fragment`null::geometry`;
  const { west, south, east, north } = bounds;
  return west <= east
    ? sql.fragment`st_makeenvelope(${west}, ${south}, ${east}, ${north}, 4326)`
    : sql.fragment`st_collect(st_makeenvelope(${west}, ${south}, 180, ${north}, 4326),
                              st_makeenvelope(-180, ${south}, ${east}, ${north}, 4326))`;
}

/** The filter's columns, in the order of FILTER_COLUMN_NAMES. */
export function filterValues(filter: EventFilter) {
  return sql.fragment`${filter.catalog}, ${sql.array(filter.datasets, 'text')},
    ${filter.bounds ? sql.jsonb(filter.bounds) : null}, ${boundsGeometry(filter.bounds)},
    ${filter.dates.from}::timestamptz, ${filter.dates.to}::timestamptz`;
}
export const FILTER_COLUMN_NAMES = sql.fragment`catalog, datasets, box, bounds, starts_at, ends_at`;

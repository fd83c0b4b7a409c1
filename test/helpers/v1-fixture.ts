import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';

// A small, deterministic world of events for the read API tests: three datasets in two catalogs,
// events spread over two years and around the globe (the antimeridian and the poles included), a
// pile of events at one exact spot, events without a location, and a dataset with a custom date field.

export type FixtureEvent = {
  id: number;
  datasetSlug: string;
  catalogSlug: string;
  title: string;
  longitude: number | null;
  latitude: number | null;
  eventTimestamp: string;
  data: Record<string, unknown>;
};

export type Fixture = {
  events: FixtureEvent[];
  datasetIds: Record<string, number>;
  catalogIds: Record<string, number>;
};

export const SAME_SPOT = { longitude: 13.4050125, latitude: 52.5200066 };

/** Mulberry32: a tiny seeded generator, so every run sees the same events (the benchmark uses it too). */
export function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const PLACES: Array<[number, number]> = [
  [13.405, 52.52], // Berlin
  [2.3522, 48.8566], // Paris
  [-74.006, 40.7128], // New York
  [139.6917, 35.6895], // Tokyo
  [179.6, -16.5], // Fiji, east of the antimeridian
  [-179.7, -16.2], // Fiji, west of it
  [-43.17, -22.9], // Rio
  [18.07, 89.5], // near the north pole (beyond the Mercator limit)
];

export async function loadReadFixture(pool: DatabasePool): Promise<Fixture> {
  const next = seededRandom(42);
  const Id = row(Type.Object({ id: Type.Number() }));
  const catalogIds: Record<string, number> = {};
  for (const [slug, title] of [
    ['news', 'News'],
    ['science', 'Science'],
  ] as const) {
    catalogIds[slug] = await pool.oneFirst(
      sql.type(
        Id,
      )`insert into catalogs (slug, title, is_public) values (${slug}, ${title}, true) returning id`,
    );
  }
  const datasetSpecs = [
    { slug: 'protests', title: 'Protests', catalog: 'news', settings: {} },
    { slug: 'fires', title: 'Fires', catalog: 'news', settings: {} },
    {
      slug: 'exhibitions',
      title: 'Exhibitions',
      catalog: 'science',
      settings: { dateFields: ['startDate'] },
    },
  ];
  const datasetIds: Record<string, number> = {};
  for (const spec of datasetSpecs) {
    datasetIds[spec.slug] = await pool.oneFirst(sql.type(Id)`
      insert into datasets (catalog_id, slug, title, is_public, schema_settings)
      values (${catalogIds[spec.catalog] ?? 0}, ${spec.slug}, ${spec.title}, true, ${sql.jsonb(spec.settings)})
      returning id`);
  }

  const start = Date.parse('2023-01-01T00:00:00Z');
  const span = 730 * 86_400_000;
  const events: Omit<FixtureEvent, 'id'>[] = [];
  for (let i = 0; i < 400; i++) {
    const spec = datasetSpecs[i % 3] ?? datasetSpecs[0];
    if (!spec) throw new Error('no dataset');
    const place = PLACES[Math.floor(next() * PLACES.length)] ?? PLACES[0];
    if (!place) throw new Error('no place');
    const located = i % 37 !== 5;
    const longitude = located ? clampLon(place[0] + (next() - 0.5) * 3) : null;
    const latitude = located ? Math.max(-89.9, Math.min(89.9, place[1] + (next() - 0.5) * 3)) : null;
    const timestamp = new Date(start + Math.floor(next() * span)).toISOString();
    const data: Record<string, unknown> = { mag: Math.round(next() * 90) / 10, seq: i };
    if (spec.slug === 'exhibitions') {
      // The exhibition's own start date, up to 400 days away from when it was recorded; some are junk.
      data.startDate =
        i % 10 === 2
          ? 'sometime in spring'
          : new Date(Date.parse(timestamp) + Math.floor((next() - 0.5) * 800) * 86_400_000).toISOString();
    }
    events.push({
      datasetSlug: spec.slug,
      catalogSlug: spec.catalog,
      title: `event ${i}`,
      longitude,
      latitude,
      eventTimestamp: timestamp,
      data,
    });
  }
  for (let i = 0; i < 6; i++) {
    events.push({
      datasetSlug: 'protests',
      catalogSlug: 'news',
      title: `same spot ${i}`,
      longitude: SAME_SPOT.longitude,
      latitude: SAME_SPOT.latitude,
      eventTimestamp: new Date(Date.parse('2024-06-15T12:00:00Z') + i * 3_600_000).toISOString(),
      data: { mag: i, seq: 1000 + i },
    });
  }

  const stored: FixtureEvent[] = [];
  for (const event of events) {
    const id = await pool.oneFirst(sql.type(Id)`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      values (${datasetIds[event.datasetSlug] ?? 0}, ${catalogIds[event.catalogSlug] ?? 0},
              ${`u${stored.length}`}, ${event.title}, ${sql.jsonb(event.data as Record<string, string>)},
              ${event.longitude === null ? null : sql.fragment`st_setsrid(st_makepoint(${event.longitude}, ${event.latitude}), 4326)`},
              ${event.eventTimestamp})
      returning id`);
    stored.push({ ...event, id });
  }
  return { events: stored, datasetIds, catalogIds };
}

function clampLon(lon: number): number {
  if (lon > 180) return lon - 360;
  if (lon < -180) return lon + 360;
  return lon;
}

export type ExpectedFilter = {
  catalog?: string;
  datasets?: string[];
  bounds?: { north: number; south: number; east: number; west: number };
  from?: string;
  /** Exclusive. */
  to?: string;
  dateField?: 'eventTimestamp' | 'startDate';
};

/** The fixture events a filter should give, computed without the database. */
export function expectedEvents(fixture: Fixture, filter: ExpectedFilter): FixtureEvent[] {
  return fixture.events.filter((event) => {
    if (filter.catalog && event.catalogSlug !== filter.catalog) return false;
    if (filter.datasets && !filter.datasets.includes(event.datasetSlug)) return false;
    if (filter.bounds) {
      const { north, south, east, west } = filter.bounds;
      if (event.longitude === null || event.latitude === null) return false;
      if (event.latitude < south || event.latitude > north) return false;
      const inLon =
        west <= east
          ? event.longitude >= west && event.longitude <= east
          : event.longitude >= west || event.longitude <= east;
      if (!inLon) return false;
    }
    let date: number | null = Date.parse(event.eventTimestamp);
    if (filter.dateField === 'startDate') {
      const value = event.data.startDate;
      date = typeof value === 'string' && !Number.isNaN(Date.parse(value)) ? Date.parse(value) : null;
      if (date === null && (filter.from || filter.to)) return false;
      if (value === undefined && (filter.from || filter.to)) return false;
    }
    if (filter.from && (date === null || date < Date.parse(filter.from))) return false;
    if (filter.to && (date === null || date >= Date.parse(filter.to))) return false;
    return true;
  });
}

export type Params = Record<string, string | string[] | object>;

/** GET a read-API path with query parameters (arrays repeat, objects become JSON); status and parsed body. */
export async function getJson(
  app: FastifyInstance,
  path: string,
  params: Params = {},
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON bodies and assert every field's type themselves
): Promise<{ status: number; body: any }> {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (Array.isArray(value)) for (const item of value) search.append(key, item);
    else search.append(key, typeof value === 'object' ? JSON.stringify(value) : value);
  }
  const response = await app.inject({ method: 'GET', url: `${path}?${search}` });
  return { status: response.statusCode, body: response.json() };
}

/** A public dataset `large-rows` of `count` events whose data hold `bytes` each: pages and exports of size. */
export async function insertLargeEvents(pool: DatabasePool, count: number, bytes: number): Promise<void> {
  await pool.query(sql.unsafe`
    with c as (insert into catalogs (slug, title, is_public) values ('big', 'Big', true) returning id),
    d as (insert into datasets (catalog_id, slug, title, is_public) select id, 'large-rows', 'Large rows', true
          from c returning id, catalog_id)
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, 'large-' || n, 'large ' || n, jsonb_build_object('text', repeat('x', ${bytes})),
           ST_SetSRID(ST_MakePoint(13.4, 52.5), 4326), timestamptz '2025-01-01' + n * interval '1 day'
    from d cross join generate_series(1, ${count}) n`);
}

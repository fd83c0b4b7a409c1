import type { Test } from 'tap';
import { sql } from '../../src/adapters/postgres/database.ts';
import { accountsApp, unlimitedAnonymousReads } from './accounts.ts';

// The dataset of the location privacy tests (issue 38 §4): 1 km cells, k = 3, a group of five
// events inside one cell, a pair in another and two lone events, owned by `owner`.

export type Point = [number, number];

export const GROUP: Point[] = Array.from({ length: 5 }, (_, i) => [
  13.405 + i * 0.0003,
  52.5201 + i * 0.0002,
]);
export const PAIR: Point[] = [
  [13.2003, 52.6004],
  [13.2011, 52.6009],
];
export const LONE: Point[] = [
  [13.6001, 52.3002],
  [13.7004, 52.4401],
];
export const ALL: Point[] = [...GROUP, ...PAIR, ...LONE];

/** The dataset; with `privacy: false` it starts without settings (the settings page sets them). */
export async function setUp(t: Test, options: { privacy?: boolean } = {}) {
  const app = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const owner = await app.createUser({ trustLevel: 3 });
  const stranger = await app.createUser({ trustLevel: 3 });
  await app.db.pool.query(sql.unsafe`
    with cat as (insert into catalogs (slug, title, is_public, created_by)
                 values ('people', 'People', true, ${owner.id}) returning id),
    ds as (insert into datasets (catalog_id, slug, title, is_public, created_by)
           select id, 'sightings', 'Sightings', true, ${owner.id} from cat returning id, catalog_id)
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select ds.id, ds.catalog_id, 'e' || p.n, 'event ' || p.n, '{}'::jsonb,
           st_setsrid(st_makepoint(p.lon, p.lat), 4326), timestamptz '2025-01-01' + p.n * interval '1 day'
    from ds cross join (select * from unnest(${sql.array(
      ALL.map((p) => p[0]),
      'float8',
    )}::float8[], ${sql.array(
      ALL.map((p) => p[1]),
      'float8',
    )}::float8[]) with ordinality as u(lon, lat, n)) p`);
  if (options.privacy !== false)
    await app.db.pool.query(sql.unsafe`
      update datasets set privacy_cell_metres = 1000, privacy_min_count = 3 where slug = 'sightings'`);
  const centre = (await app.db.pool.one(sql.unsafe`
    select st_x(c) as lon, st_y(c) as lat
    from (select chronomap_privacy_cell(${GROUP[0]![0]!}, ${GROUP[0]![1]!}, 1000) as c) x`)) as {
    lon: number;
    lat: number;
  };
  return { ...app, owner, stranger, centre: [centre.lon, centre.lat] as Point };
}

export function near(a: Point, b: Point): boolean {
  return Math.abs(a[0] - b[0]) < 1e-9 && Math.abs(a[1] - b[1]) < 1e-9;
}

import t, { type Test } from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { clusterLevel } from '../../../src/domain/read/clustering.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import type { EventReader } from '../../../src/ports/read/event-reader.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture, type Params } from '../../helpers/v1-fixture.ts';

// The all-time level-10 cells (migrations 0963 and 0966) and the level-6 cells (0963), kept from the level-10
// counts by triggers on event_cell_counts: exact against a recount after inserts, deletes, updates
// in time and space and a dataset moved to another catalog, and the map views that read them (zoom
// 0-4 through the level-6 cells, undated views through the all-time cells) give the same features
// as the rows. The rows are asked by marking every dataset's counts pending, which sends every
// view to them (answer-path.ts, countsPending), with a reader of its own (a fresh scope memo).

const VIEWS: Array<{ name: string; bounds: Params[string] }> = [
  { name: 'world', bounds: { north: 90, south: -90, east: 180, west: -180 } },
  { name: 'most of the world', bounds: { north: 80, south: -80, east: 170, west: -170 } },
  { name: 'Europe and Africa', bounds: { north: 71.3, south: -35.2, east: 41.7, west: -18.4 } },
  { name: 'across the antimeridian', bounds: { north: 40.5, south: -45.5, east: -120.3, west: 110.7 } },
  { name: 'a country', bounds: { north: 55.1, south: 47.2, east: 15.1, west: 5.8 } },
];
const ZOOMS = [0, 2, 3, 4, 6];
const WINDOWS: Array<{ name: string; params: Params }> = [
  { name: 'undated', params: {} },
  {
    name: 'a year from mid-month',
    params: { startDate: '2019-03-17T05:00:00Z', endDate: '2020-03-09T00:00:00Z' },
  },
  { name: 'from a date on', params: { startDate: '2021-07-04T12:00:00Z' } },
];
const SCOPES: Array<{ name: string; params: Params; zooms?: number[] }> = [
  { name: 'everything', params: {} },
  { name: 'catalog news', params: { catalog: 'news' } },
  { name: 'catalog science', params: { catalog: 'science' } },
  // Datasets read their own all-time and month cells (migration 0966), never the level-6 cells: one
  // zoom inside the level-6 range and one beyond it read the same tables.
  { name: 'datasets fires and exhibitions', params: { datasets: 'fires,exhibitions' }, zooms: [2, 6] },
];

type Feature = {
  geometry: { coordinates: [number, number] };
  properties: { id: number | string; count?: number; eventIds?: number[] };
};

async function features(reader: EventReader, params: Params, zoom: number): Promise<Feature[]> {
  const query = Object.fromEntries(
    Object.entries(params).map(([key, value]) => [
      key,
      typeof value === 'object' ? JSON.stringify(value) : value,
    ]),
  );
  const filter = parseEventFilter(query, { boundsRequired: true });
  return JSON.parse(await reader.clusterFeatures(null, filter, clusterLevel(zoom))) as Feature[];
}

/** Every view, zoom, window and scope: its features by id, with count, listed ids and centroid. */
async function answers(reader: EventReader): Promise<Map<string, Feature[]>> {
  const all = new Map<string, Feature[]>();
  for (const view of VIEWS)
    for (const zoom of ZOOMS)
      for (const window of WINDOWS)
        for (const scope of SCOPES) {
          if (scope.zooms && !scope.zooms.includes(zoom)) continue;
          const list = await features(
            reader,
            { bounds: view.bounds, ...window.params, ...scope.params },
            zoom,
          );
          list.sort((a, b) => String(a.properties.id).localeCompare(String(b.properties.id)));
          all.set(`${view.name}, zoom ${zoom}, ${window.name}, ${scope.name}`, list);
        }
  return all;
}

t.test('all-time and level-6 cells: exact, and the same answers as the rows', async (t) => {
  const db = await testDatabase(t);
  await loadReadFixture(db.pool);
  // Events spread over the world (a deterministic scatter), over eleven years, in every dataset,
  // and some on the edges of level-6 cells (multiples of 5.625° of longitude).
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, 'spread-' || n, 'spread ' || n, '{}'::jsonb,
           st_setsrid(st_makepoint(((n * 7919) % 35900) / 100.0 - 179.5, ((n * 104729) % 15000) / 100.0 - 75), 4326),
           timestamptz '2015-01-01' + ((n * 7793) % 4000) * interval '1 day' + ((n * 37) % 86400) * interval '1 second'
    from generate_series(1, 3000) n
    join (select id, catalog_id, row_number() over (order by id) - 1 as k from datasets) d on d.k = n % 3
    union all
    select d.id, d.catalog_id, 'edge-' || k, 'edge ' || k, '{}'::jsonb,
           st_setsrid(st_makepoint(-180 + 5.625 * k, 10 + (k % 7)), 4326),
           timestamptz '2019-06-01' + k * interval '3 days'
    from generate_series(1, 63) k
    join (select id, catalog_id from datasets order by id limit 1) d on true
    union all
    select d.id, d.catalog_id, 'dense-' || k, 'dense ' || k, '{}'::jsonb,
           st_setsrid(st_makepoint(2.35 + (k % 5) * 0.01, 48.85 + (k % 3) * 0.01), 4326),
           timestamptz '2019-03-18' + (k % 12) * interval '1 day' + k * interval '1 minute'
    from generate_series(1, 400) k
    join (select id, catalog_id from datasets order by id limit 1) d on true`);

  async function sameAsRows(t: Test, when: string): Promise<void> {
    await assertCountTablesExact(t, db.pool, when);
    const counted = await answers(postgresEventReader(db.pool));
    await db.pool.query(sql.unsafe`update datasets set counts_pending = true`);
    const rows = await answers(postgresEventReader(db.pool));
    await db.pool.query(sql.unsafe`update datasets set counts_pending = false`);
    let views = 0;
    for (const [name, list] of counted) {
      const other = rows.get(name) ?? [];
      const summary = (features: Feature[]) =>
        features.map((f) => [f.properties.id, f.properties.count ?? 1, f.properties.eventIds ?? null]);
      t.same(summary(list), summary(other), `${when}: ${name}: the same features, counts and ids`);
      const centroids = list.every((feature, i) => {
        const [lon, lat] = feature.geometry.coordinates;
        const [otherLon, otherLat] = other[i]?.geometry.coordinates ?? [Number.NaN, Number.NaN];
        return Math.abs(lon - otherLon) < 1e-9 && Math.abs(lat - otherLat) < 1e-9;
      });
      t.ok(centroids, `${when}: ${name}: the same centroids`);
      if (list.length > 0) views += 1;
    }
    t.ok(views > counted.size / 2, `${when}: most views hold events (${views} of ${counted.size})`);
  }

  await sameAsRows(t, 'after the inserts');

  // The whole days at the ends of the window (March 17-31, 2019 and March 1-8, 2020) come from the
  // day cells where these gather many events per cell of the box (the dense city at the start), and
  // from the rows where a cell holds an event or two (the end): a change to the day cells alone
  // shows in the first answer only.
  const total = async () =>
    (
      await features(
        postgresEventReader(db.pool),
        { bounds: { north: 85, south: -85, east: 180, west: -180 }, ...WINDOWS[1]?.params },
        2,
      )
    ).reduce((sum, feature) => sum + (feature.properties.count ?? 1), 0);
  const exact = await total();
  const doubled = async (from: string, to: string) => {
    await db.pool.query(sql.unsafe`update event_cell_day_counts set event_count = event_count * 2
                                   where day >= ${from}::timestamptz and day < ${to}::timestamptz`);
    const answer = await total();
    await db.pool.query(sql.unsafe`update event_cell_day_counts set event_count = event_count / 2
                                   where day >= ${from}::timestamptz and day < ${to}::timestamptz`);
    return answer;
  };
  t.ok((await doubled('2019-03-18', '2019-04-01')) > exact, 'the dense first days: read from the day cells');
  t.equal(await doubled('2020-03-01', '2020-03-09'), exact, 'the sparse last days: read from the rows');
  await assertCountTablesExact(t, db.pool, 'after the day cells were put back');

  await db.pool.query(sql.unsafe`delete from events where unique_id like 'spread-%' and id % 11 = 0`);
  await sameAsRows(t, 'after deletes');

  // Across cells of every level and across months and years.
  await db.pool.query(sql.unsafe`
    update events set location = st_setsrid(st_makepoint(st_x(location) / 2 + 20, st_y(location) / 2), 4326),
                      event_timestamp = event_timestamp + interval '400 days'
    where unique_id like 'spread-%' and id % 7 = 0`);
  await sameAsRows(t, 'after updates in time and space');

  // A dataset moves to the other catalog, its events and their counts with it (migration 0321).
  await db.pool.query(sql.unsafe`
    update datasets set catalog_id = (select id from catalogs where slug = 'science') where slug = 'fires'`);
  await sameAsRows(t, 'after a dataset moved to another catalog');

  await db.pool.query(sql.unsafe`delete from datasets where slug = 'protests'`);
  await sameAsRows(t, 'after a dataset was deleted');

  await db.pool.query(sql.unsafe`truncate events cascade`);
  await assertCountTablesExact(t, db.pool, 'after a truncate');
});

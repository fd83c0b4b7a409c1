import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { clusterLevel } from '../../../src/domain/read/clustering.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import type { EventReader } from '../../../src/ports/read/event-reader.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture, type Params, SAME_SPOT } from '../../helpers/v1-fixture.ts';

// The precomputed level-16 cell counts (migrations/0210) that answer unfiltered map views at zoom
// 9-13: kept exact by the triggers through inserts, updates and deletes, and giving the same
// features as the row-by-row path. Both paths are asked through the reader itself, whose density
// threshold otherwise picks the rows for a data set this small.

const VIEWS: Array<{ name: string; bounds: Params[string] }> = [
  { name: 'world', bounds: { north: 90, south: -90, east: 180, west: -180 } },
  { name: 'around Berlin', bounds: { north: 54.2, south: 50.9, east: 15.1, west: 11.8 } },
  { name: 'across the antimeridian', bounds: { north: 0, south: -30, east: -170, west: 170 } },
];
const ZOOMS = [9, 10, 11, 12, 13];

type Feature = {
  geometry: { coordinates: [number, number] };
  properties: { id: number | string; type: string; count?: number; eventIds?: number[]; title?: string };
};

t.test('fine cell counts', async (t) => {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  const protests = fixture.datasetIds.protests ?? 0;
  const news = fixture.catalogIds.news ?? 0;

  // The same reader twice: one always answering unfiltered views from the cell counts, one never.
  const fineReader = postgresEventReader(db.pool, { fineCellsMinDensity: 0 });
  const rowsReader = postgresEventReader(db.pool, { fineCellsMinDensity: Number.POSITIVE_INFINITY });
  async function features(reader: EventReader, params: Params, zoom: number): Promise<Map<string, Feature>> {
    const query = Object.fromEntries(
      Object.entries(params).map(([key, value]) => [
        key,
        typeof value === 'object' ? JSON.stringify(value) : value,
      ]),
    );
    const filter = parseEventFilter(query, { boundsRequired: true });
    const list = JSON.parse(await reader.clusterFeatures(null, filter, clusterLevel(zoom))) as Feature[];
    return new Map(list.map((feature) => [String(feature.properties.id), feature]));
  }

  const IdsRow = row(Type.Object({ ids: Type.Array(Type.Number()) }));
  /**
   * Every small cluster of a view lists exactly the ids of its cell's events in the view, ascending
   * (the level-16 counts' lists are kept in no order, and a cell of a coarser level gathers several).
   */
  async function smallClustersListTheirEvents(
    t: Test,
    label: string,
    bounds: Params[string],
    list: Map<string, Feature>,
  ): Promise<void> {
    const { north, south, east, west } = bounds as {
      north: number;
      south: number;
      east: number;
      west: number;
    };
    const longitudes =
      west <= east
        ? sql.fragment`st_x(location) between ${west} and ${east}`
        : sql.fragment`(st_x(location) >= ${west} or st_x(location) <= ${east})`;
    for (const [id, feature] of list) {
      const [, level, x, y] = id.split(':').map(Number);
      if (!id.startsWith('cluster:') || level === undefined || Number.isNaN(level)) continue;
      if ((feature.properties.count ?? 0) > 10) continue;
      const expected = await db.pool.oneFirst(sql.type(IdsRow)`
        select coalesce(array_agg(id order by id), '{}') as ids from events
        where location is not null and grid_x >> ${24 - level} = ${x ?? -1} and grid_y >> ${24 - level} = ${y ?? -1}
          and ${longitudes} and st_y(location) between ${south} and ${north}`);
      t.same(feature.properties.eventIds, expected, `${label}: ${id} lists its events, ascending`);
    }
  }

  async function samePaths(t: Test, when: string): Promise<void> {
    for (const view of VIEWS) {
      for (const zoom of ZOOMS) {
        const label = `${when}: ${view.name}, zoom ${zoom}`;
        const fine = await features(fineReader, { bounds: view.bounds }, zoom);
        const rows = await features(rowsReader, { bounds: view.bounds }, zoom);
        await smallClustersListTheirEvents(t, label, view.bounds, fine);
        t.same([...fine.keys()].sort(), [...rows.keys()].sort(), `${label}: the same features`);
        for (const [id, feature] of fine) {
          const other = rows.get(id);
          t.same(feature.properties, other?.properties, `${label}: ${id} alike`);
          const [lon, lat] = feature.geometry.coordinates;
          const [otherLon, otherLat] = other?.geometry.coordinates ?? [Number.NaN, Number.NaN];
          t.ok(
            Math.abs(lon - otherLon) < 1e-9 && Math.abs(lat - otherLat) < 1e-9,
            `${label}: ${id} at the same centroid`,
          );
        }
      }
    }
  }

  const CellRow = row(
    Type.Object({
      x: Type.Number(),
      y: Type.Number(),
      count: Type.Number(),
      ids: Type.Union([Type.Array(Type.Number()), Type.Null()]),
    }),
  );
  async function sameAsRecount(t: Test, when: string): Promise<void> {
    const kept = await db.pool.any(sql.type(CellRow)`
      select cell_x as x, cell_y as y, event_count::int8 as count,
             (select array_agg(i order by i) from unnest(ids) i) as ids
      from event_fine_cell_counts order by 1, 2`);
    const recount = await db.pool.any(sql.type(CellRow)`
      select grid_x >> 8 as x, grid_y >> 8 as y, count(*)::int8 as count, array_agg(id order by id) as ids
      from events where location is not null group by 1, 2 order by 1, 2`);
    t.same(
      kept.map((cell) => [cell.x, cell.y, cell.count]),
      recount.map((cell) => [cell.x, cell.y, cell.count]),
      `${when}: one row per occupied cell, with its count`,
    );
    for (const [i, cell] of kept.entries()) {
      if (cell.ids !== null && cell.ids.length === cell.count)
        t.same(cell.ids, recount[i]?.ids, `${when}: the ids of cell ${cell.x}:${cell.y}`);
      if (cell.count > 10) t.equal(cell.ids, null, `${when}: no ids kept for a cell of ${cell.count}`);
    }
  }

  await sameAsRecount(t, 'after the fixture');
  await samePaths(t, 'after the fixture');

  // The features' JSON is written as text by the database: a title that needs escaping comes back
  // as stored, from both paths and at every zoom (one event alone in the middle of the Atlantic).
  const title = 'quote " backslash \\ slash / newline \n tab \t control \u0001 é ✓ </script>';
  const lonely = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    values (${protests}, ${news}, 'lonely', ${title}, '{}'::jsonb, st_setsrid(st_makepoint(-30.123, 40.456), 4326),
            '2024-03-01T00:00:00Z')
    returning id`);
  for (const zoom of [...ZOOMS, 4, 15, 16]) {
    for (const [name, reader] of [
      ['counts', fineReader],
      ['rows', rowsReader],
    ] as const) {
      const around = { north: 41, south: 40, east: -29.5, west: -30.5 };
      const list = await features(reader, { bounds: around }, zoom);
      const point = list.get(String(lonely));
      t.equal(point?.properties.type, 'event-point', `${name}, zoom ${zoom}: the lonely event is a point`);
      t.equal(point?.properties.title, title, `${name}, zoom ${zoom}: its title, escaped and back`);
      t.same(point?.geometry.coordinates, [-30.123, 40.456], `${name}, zoom ${zoom}: where it is`);
    }
  }

  // Grow the spot past ten events (its cell then keeps no ids), move an event, drop some.
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select ${protests}, ${news}, 'spot-extra-' || g, 'extra ' || g, '{}'::jsonb,
           st_setsrid(st_makepoint(${SAME_SPOT.longitude}, ${SAME_SPOT.latitude}), 4326),
           timestamptz '2024-07-01' + g * interval '1 hour'
    from generate_series(1, 8) g`);
  await db.pool.query(sql.unsafe`
    update events set location = st_setsrid(st_makepoint(2.35, 48.85), 4326)
    where id = (select min(id) from events where title like 'event %' and location is not null)`);
  await sameAsRecount(t, 'after inserts and a move');
  await samePaths(t, 'after inserts and a move');

  await db.pool.query(
    sql.unsafe`delete from events where unique_id like 'spot-extra-%' and title <> 'extra 1'`,
  );
  await db.pool.query(sql.unsafe`
    delete from events where id in (select id from events where location is not null order by id limit 25)`);
  await sameAsRecount(t, 'after deletes');
  await samePaths(t, 'after deletes');

  const spot = await features(
    fineReader,
    { bounds: { north: 52.6, south: 52.4, east: 13.5, west: 13.3 } },
    13,
  );
  const cluster = [...spot.values()].find(
    (feature) =>
      feature.properties.type === 'event-cluster' && (feature.properties.eventIds ?? []).length >= 7,
  );
  t.ok(cluster, 'the spot, back to ten or fewer events after deletes, lists its ids again');

  // A cell's list can end up empty while it still holds events: over ten (no list), back to nine,
  // one more (listed alone), that one deleted. Its clusters then read their ids from the events.
  const gulf = sql.fragment`st_setsrid(st_makepoint(100.5, 10.5), 4326)`;
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select ${protests}, ${news}, 'gulf-' || g, 'gulf ' || g, '{}'::jsonb, ${gulf}, timestamptz '2024-05-01' + g * interval '1 hour'
    from generate_series(1, 11) g`);
  await db.pool.query(sql.unsafe`delete from events where unique_id in ('gulf-1', 'gulf-2')`);
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    values (${protests}, ${news}, 'gulf-late', 'gulf late', '{}'::jsonb, ${gulf}, '2024-05-02')`);
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'gulf-late'`);
  const EmptyRow = row(
    Type.Object({ count: Type.Number(), listed: Type.Union([Type.Number(), Type.Null()]) }),
  );
  const gulfCell = await db.pool.one(sql.type(EmptyRow)`
    select event_count::int8 as count, cardinality(ids)::int8 as listed from event_fine_cell_counts
    where cell_x = (select grid_x >> 8 from events where unique_id = 'gulf-3')
      and cell_y = (select grid_y >> 8 from events where unique_id = 'gulf-3')`);
  t.same(gulfCell, { count: 9, listed: 0 }, 'nine events, an empty list');
  // And one event in the next level-16 cell to the west, the same cell at zoom 9-11: ten together.
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    values (${protests}, ${news}, 'gulf-west', 'gulf west', '{}'::jsonb,
            st_setsrid(st_makepoint(100.497, 10.5), 4326), '2024-05-03')`);
  await samePaths(t, 'with an empty list');
  for (const zoom of ZOOMS) {
    const around = await features(
      fineReader,
      { bounds: { north: 11, south: 10, east: 101, west: 100 } },
      zoom,
    );
    const gulfCluster = [...around.values()].find((feature) => (feature.properties.count ?? 0) >= 9);
    const expected = zoom >= 12 ? 9 : 10;
    t.equal(gulfCluster?.properties.count, expected, `zoom ${zoom}: the gulf's cluster`);
    t.equal(gulfCluster?.properties.eventIds?.length, expected, `zoom ${zoom}: its ids, from the events`);
  }

  await db.pool.query(sql.unsafe`truncate events cascade`);
  t.equal(
    await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int8 as n from event_fine_cell_counts`),
    0,
    'truncating events empties the counts',
  );
});

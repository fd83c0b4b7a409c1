import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../src/adapters/postgres/database.ts';
import { policyFile, unlimitedAnonymousReads } from '../helpers/accounts.ts';
import { testApp } from '../helpers/app.ts';
import { getJson, loadReadFixture, type Params, SAME_SPOT } from '../helpers/v1-fixture.ts';

// The precomputed level-16 cell counts (migrations/0210) that answer unfiltered map views at zoom
// 9-13: kept exact by the triggers through inserts, updates and deletes, and giving the same
// features as the row-by-row path (the same events asked for with a date filter that every event
// passes, which reads the rows).

const VIEWS: Array<{ name: string; bounds: Params[string] }> = [
  { name: 'world', bounds: { north: 90, south: -90, east: 180, west: -180 } },
  { name: 'around Berlin', bounds: { north: 54.2, south: 50.9, east: 15.1, west: 11.8 } },
  { name: 'across the antimeridian', bounds: { north: 0, south: -30, east: -170, west: 170 } },
];
const ZOOMS = [9, 10, 11, 12, 13];
const ROWS_PATH = { startDate: '1900-01-01' };

type Feature = {
  geometry: { coordinates: [number, number] };
  properties: { id: number | string; type: string; count?: number; eventIds?: number[]; title?: string };
};

t.test('fine cell counts', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  const protests = fixture.datasetIds.protests ?? 0;
  const news = fixture.catalogIds.news ?? 0;

  async function features(params: Params): Promise<Map<string, Feature>> {
    const { status, body } = await getJson(app, '/api/v1/events/geo', params);
    if (status !== 200) throw new Error(`geo answered ${status}: ${JSON.stringify(body)}`);
    return new Map((body.features as Feature[]).map((feature) => [String(feature.properties.id), feature]));
  }

  async function samePaths(t: Test, when: string): Promise<void> {
    for (const view of VIEWS) {
      for (const zoom of ZOOMS) {
        const label = `${when}: ${view.name}, zoom ${zoom}`;
        const fine = await features({ bounds: view.bounds, zoom: String(zoom) });
        const rows = await features({ bounds: view.bounds, zoom: String(zoom), ...ROWS_PATH });
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

  const spot = await features({
    bounds: { north: 52.6, south: 52.4, east: 13.5, west: 13.3 },
    zoom: '13',
  });
  const cluster = [...spot.values()].find(
    (feature) =>
      feature.properties.type === 'event-cluster' && (feature.properties.eventIds ?? []).length >= 7,
  );
  t.ok(cluster, 'the spot, back to ten or fewer events after deletes, lists its ids again');

  await db.pool.query(sql.unsafe`truncate events cascade`);
  t.equal(
    await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int8 as n from event_fine_cell_counts`),
    0,
    'truncating events empties the counts',
  );
});

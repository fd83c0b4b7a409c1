import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { GRID_LEVEL, mercatorCell } from '../../../src/domain/read/clustering.ts';
import { testDatabase } from '../../helpers/database.ts';

// Migration 0320 rewrote chronomap_mercator_x/y (the generated columns grid_x/grid_y) so that
// PostgreSQL inlines them. They must give what 0200's versions gave, and what the domain's
// mercatorCell computes, for every input: null, the edges of the map, beyond them, the poles.

const Cell = row(
  Type.Object({
    x: Type.Union([Type.Number(), Type.Null()]),
    y: Type.Union([Type.Number(), Type.Null()]),
    old_x: Type.Union([Type.Number(), Type.Null()]),
    old_y: Type.Union([Type.Number(), Type.Null()]),
  }),
);
const PlanLine = row(Type.Object({ 'QUERY PLAN': Type.String() }));

t.test('grid cells: same as 0200 and as the domain, and inlined', async (t) => {
  const { pool } = await testDatabase(t);
  await pool.connect(async (connection) => {
    // 0200's bodies, verbatim, to compare with (temporary functions: one connection throughout).
    await connection.query(sql.unsafe`
      create function pg_temp.old_x(lon float8) returns integer language sql immutable strict
        return least(16777215, greatest(0, floor((lon + 180.0) / 360.0 * 16777216.0)))::integer`);
    await connection.query(sql.unsafe`
      create function pg_temp.old_y(lat float8) returns integer language sql immutable strict
        return least(16777215, greatest(0, floor(
          (1.0 - asinh(tan(radians(least(85.05112878, greatest(-85.05112878, lat))))) / pi()) / 2.0 * 16777216.0
        )))::integer`);
    const at = (lon: number | null, lat: number | null) =>
      connection.one(sql.type(Cell)`
        select chronomap_mercator_x(${lon}::float8) as x, chronomap_mercator_y(${lat}::float8) as y,
               pg_temp.old_x(${lon}::float8) as old_x, pg_temp.old_y(${lat}::float8) as old_y`);

    t.same(await at(null, null), { x: null, y: null, old_x: null, old_y: null }, 'null stays null');

    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const points: [number, number][] = [
      [-180, -90],
      [180, 90],
      [-180, -85.05112878],
      [180, 85.05112878],
      [0, 85.0511287798066],
      [0, -85.0511287798066],
      [-200, -100],
      [200, 100],
      [0, 0],
      [179.9999999, 0.0000001],
      [-179.99999999, -0.0000001],
      [13.405, 52.52],
      [-74.006, 40.7128],
      ...Array.from({ length: 40 }, (): [number, number] => [random() * 360 - 180, random() * 180 - 90]),
    ];
    for (const [lon, lat] of points) {
      const expected = mercatorCell(lon, lat, GRID_LEVEL);
      t.same(
        await at(lon, lat),
        { x: expected.x, y: expected.y, old_x: expected.x, old_y: expected.y },
        `${lon}, ${lat}: the cell of 0200 and of mercatorCell`,
      );
    }

    const plan = await connection.any(sql.type(PlanLine)`
      explain (verbose, costs off)
      select chronomap_mercator_x(st_x(location)), chronomap_mercator_y(st_y(location)) from events`);
    const text = plan.map((line) => line['QUERY PLAN']).join('\n');
    t.notMatch(text, /chronomap_mercator/, 'the planner inlines both functions (no call left)');
    t.match(text, /float8smaller/, 'the plan holds their bodies');
  });
});

import pg from 'pg';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { fineCellsSwitchTask } from '../../../src/adapters/jobs/ingest-worker.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresFineCellsSwitch } from '../../../src/adapters/postgres/ingest/fine-cells-switch.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { scopeResolver } from '../../../src/adapters/postgres/read/scope.ts';
import { clusterLevel } from '../../../src/domain/read/clustering.ts';
import { FINE_CELLS_DRAIN_MS, FINE_CELLS_OFF_MS } from '../../../src/domain/read/fine-cells.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import type { FineCellsSwitchOutcome } from '../../../src/ports/ingest/fine-cells-switch.ts';
import { assertCountTablesExact, countTableMode, SEES_EVERYTHING } from '../../helpers/count-tables.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// The switch of the level-16 cells (docs/scaling.md, "Step 3"), as the schedule manager runs it
// each minute, on a real database and with the clock port: sparse data drains the table and, two
// minutes later, drops it; dense data rebuilds it an hour after the drop; a drain is undone when
// the data gets dense; a switch never waits long for writers. Throughout, the readers' unfiltered
// views at zoom 9-13 give what the rows give, and every count table equals a recount.

const Count = row(Type.Object({ n: Type.Number() }));
const VIEWS = [
  { north: 90, south: -90, east: 180, west: -180 },
  { north: 46, south: 44.9, east: 22.1, west: 9.9 },
];

type Feature = { geometry: { coordinates: [number, number] }; properties: { id: number | string } };

/**
 * A view's features in id order, centroids rounded to 1e-9: the two paths list them in other orders
 * and add the coordinates in other orders.
 */
function comparable(json: string): unknown[] {
  return (JSON.parse(json) as Feature[])
    .map((feature) => ({
      ...feature,
      geometry: { ...feature.geometry, coordinates: feature.geometry.coordinates.map((c) => c.toFixed(9)) },
    }))
    .sort((a, b) => String(a.properties.id).localeCompare(String(b.properties.id)));
}

t.test('the minute task drains, drops and rebuilds the level-16 cells as the data asks', async (t) => {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  const datasetId = Object.values(fixture.datasetIds)[0] as number;

  // The clock port, set relative to the mode's last change (which the database's clock dates):
  // the task's decisions then depend on no real time passing.
  let now = new Date(0);
  const sinceChange = async (ms: number) => {
    const changedAt = await db.pool.oneFirst(
      sql.type(row(Type.Object({ changed_at: Type.String() })))`
        select changed_at from count_table_modes where count_table = 'event_fine_cell_counts'`,
    );
    now = new Date(new Date(changedAt).getTime() + ms);
  };
  const logged: string[] = [];
  const task = fineCellsSwitchTask(
    { cells: postgresFineCellsSwitch(db.pool), clock: { now: () => now }, minEvents: 0 },
    (line) => logged.push(line),
  );
  const pass = async () => (await task.run()) as FineCellsSwitchOutcome;

  const mode = () => countTableMode(db.pool, 'event_fine_cell_counts');
  const fineRows = () =>
    db.pool.oneFirst(sql.type(Count)`select count(*)::int as n from event_fine_cell_counts`);
  // What autovacuum's analyze would leave; the test does not wait for it.
  const analyse = async () => {
    await db.pool.query(sql.unsafe`analyze events`);
    await db.pool.query(sql.unsafe`analyze event_fine_cell_counts`);
  };
  /** `count` events at `spots` distinct points (level-16 cells) around `lon`, `lat`. */
  const addEvents = async (prefix: string, count: number, spots: number, lon: number, lat: number) => {
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      select id, catalog_id, ${prefix} || '-' || g, 'added ' || g, '{}'::jsonb,
             st_setsrid(st_makepoint(${lon} + (g % ${spots}) * 0.02, ${lat} + (g % ${spots}) * 0.001), 4326),
             timestamptz '2024-01-01' + g * interval '1 hour'
      from datasets cross join generate_series(0, ${count - 1}) g
      where id = ${datasetId}`);
    await analyse();
  };

  // The readers as a process that starts now (a reader keeps the density it read for a minute).
  const rowsReader = postgresEventReader(db.pool, { fineCellsMinDensity: Number.POSITIVE_INFINITY });
  const readsFineCells = async () =>
    (await scopeResolver(db.pool, {}).scopeOf(SEES_EVERYTHING, parseEventFilter({}))).fineCells;
  async function sameAsRows(t: Test, when: string): Promise<void> {
    const reader = postgresEventReader(db.pool, {});
    for (const bounds of VIEWS)
      for (const zoom of [9, 10, 12, 13]) {
        const filter = parseEventFilter({ bounds: JSON.stringify(bounds) }, { boundsRequired: true });
        const level = clusterLevel(zoom);
        const answer = comparable(await reader.clusterFeatures(null, filter, level));
        const rows = comparable(await rowsReader.clusterFeatures(null, filter, level));
        t.same(answer, rows, `${when}: zoom ${zoom} of ${JSON.stringify(bounds)} as the rows give it`);
      }
    await assertCountTablesExact(t, db.pool, when);
  }

  // Sparse: each added event alone in its level-16 cell.
  await addEvents('sparse', 3_000, 3_000, -150, -40);
  t.equal(await mode(), 'kept');
  await sinceChange(0);
  const drained = await pass();
  t.equal(drained.move, 'drain', 'about one event per cell: drained');
  t.equal(drained.result, 'moved');
  t.ok((drained.state?.density ?? 2) < 1.5, `the density it saw: ${drained.state?.density}`);
  t.equal(await mode(), 'draining');
  t.equal(await readsFineCells(), false, 'draining: not read');
  await sameAsRows(t, 'draining');

  await sinceChange(FINE_CELLS_DRAIN_MS - 1);
  t.equal((await pass()).result, 'stayed', 'a fresh drain is not dropped: a process may still read it');
  await sinceChange(FINE_CELLS_DRAIN_MS);
  const dropped = await pass();
  t.equal(dropped.move, 'drop', 'two minutes into the drain: dropped');
  t.equal(await mode(), 'off');
  t.equal(await fineRows(), 0);
  await sameAsRows(t, 'off');

  // An estimate that says dense where the events are not (statistics taken before a delete): the
  // cells are counted before a rebuild, and the count wins; the next count is an hour later.
  await addEvents('stale', 7_200, 600, 10, 45);
  await db.pool.query(sql.unsafe`delete from events where unique_id like 'stale-%'`);
  await sinceChange(0);
  const droppedAt = now;
  await sinceChange(FINE_CELLS_OFF_MS);
  const refuted = await pass();
  t.same(
    [refuted.result, refuted.move],
    ['stayed', null],
    'an hour off, the estimate dense: counted, not rebuilt',
  );
  t.ok((refuted.state?.density ?? 2) < 1.5, `the counted density: ${refuted.state?.density}`);
  t.equal(await mode(), 'off');
  await sinceChange(0);
  t.ok(now > droppedAt, 'the count moved the time of the mode: the next count is an hour later');

  // Dense: twelve events at each of 600 spots, stored while the table is off.
  await addEvents('dense', 7_200, 600, 10, 45);
  await sinceChange(FINE_CELLS_OFF_MS - 1);
  t.equal((await pass()).result, 'stayed', 'dense, but dropped less than an hour ago');
  t.equal(await fineRows(), 0, 'still off: the imports did not write it');
  await sinceChange(FINE_CELLS_OFF_MS);
  const rebuilt = await pass();
  t.equal(rebuilt.move, 'rebuild', 'dense an hour after the drop: rebuilt');
  t.ok((rebuilt.state?.density ?? 0) >= 2, `the estimate it saw: ${rebuilt.state?.density}`);
  t.equal(await mode(), 'kept');
  t.equal(await readsFineCells(), true, 'rebuilt and analysed: read again');
  await sameAsRows(t, 'rebuilt');
  t.equal((await pass()).result, 'stayed', 'kept and dense: stays');

  // A drain made while the data was sparse, undone once it is dense (an operator's, here).
  await db.pool.query(sql.unsafe`select chronomap_fine_cells_drain()`);
  const undone = await pass();
  t.equal(undone.move, 'keep', 'dense again: the drain is undone');
  t.equal(await mode(), 'kept');
  t.equal(await readsFineCells(), true);

  // A switch never waits long: another switch holding the mode row, then a writer of events
  // holding its shared lock while a drop would take the exclusive one.
  const other = new pg.Client({ connectionString: db.url });
  await other.connect();
  t.teardown(() => other.end());
  await other.query(`begin; select 1 from count_table_modes for update`);
  const busy = await pass();
  t.same([busy.result, busy.state], ['busy', null], 'another switch at work: this pass leaves it alone');
  await other.query('commit');

  await db.pool.query(sql.unsafe`delete from events where unique_id like 'dense-%'`);
  await analyse();
  t.equal((await pass()).move, 'drain', 'sparse again');
  await sinceChange(FINE_CELLS_DRAIN_MS);
  await other.query(`begin; select chronomap_fine_cells_written()`);
  const waiting = await pass();
  t.same([waiting.move, waiting.result], ['drop', 'busy'], 'a writer is open: the drop gives up for now');
  t.equal(await mode(), 'draining', 'and changed nothing');
  await other.query('commit');
  t.equal((await pass()).move, 'drop', 'the next minute drops it');
  t.equal(await mode(), 'off');
  await sameAsRows(t, 'dropped after a wait');

  t.same(
    logged.map((line) => line.replace(/ at [0-9.]+ events per cell/, '')),
    [
      'schedule manager: level-16 cells drain done (kept before)',
      'schedule manager: level-16 cells drop done (draining before)',
      'schedule manager: level-16 cells rebuild done (off before)',
      'schedule manager: level-16 cells keep done (draining before)',
      'schedule manager: level-16 cells drain done (kept before)',
      'schedule manager: level-16 cells drop left to a later minute: a lock was busy',
      'schedule manager: level-16 cells drop done (draining before)',
    ],
    'every move, and the one left for later, is logged',
  );
});

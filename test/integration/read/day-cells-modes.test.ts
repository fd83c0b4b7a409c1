import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { scopeResolver } from '../../../src/adapters/postgres/read/scope.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import { assertCountTablesExact, countTableMode, SEES_EVERYTHING } from '../../helpers/count-tables.ts';
import { testDatabase } from '../../helpers/database.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// The day cells' mode (migration 0970; docs/scaling.md, "Step 1"), as 0969 gave the level-16 cells
// theirs: kept (written and read), draining (written, not read), off (empty, neither). Every writer
// honours it (the events' statement triggers and the deferred refresh), the readers read the day
// cells only while kept, and a rebuild gives the exact table back. The answers that read them (a
// dated count in a box, its histogram in bins that cut months, its first and last instants) equal
// a count of the events in every mode.

const Done = row(Type.Object({ done: Type.Union([Type.Boolean(), Type.Null()]) }));
const Count = row(Type.Object({ n: Type.Number() }));
const Bin = row(Type.Object({ bin: Type.Number(), n: Type.Number() }));
const Range = row(Type.Object({ min: Type.String(), max: Type.String() }));
const EUROPE = { north: 60, south: 40, east: 20, west: -5 };
const WINDOW = { startDate: '2023-02-10T10:00:00Z', endDate: '2024-07-20T18:30:00Z' };
const WEEK = 7 * 86_400;

t.test('the day cells follow their mode', async (t) => {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  const catalogId = Object.values(fixture.catalogIds)[0] as number;
  const datasetId = Object.values(fixture.datasetIds)[0] as number;

  const mode = () => countTableMode(db.pool, 'event_cell_day_counts');
  const MOVES = {
    drain: sql.fragment`chronomap_count_table_move('event_cell_day_counts', 'kept', 'draining')`,
    keep: sql.fragment`chronomap_count_table_move('event_cell_day_counts', 'draining', 'kept')`,
    drop: sql.fragment`chronomap_count_table_drop('event_cell_day_counts')`,
  };
  const change = async (step: keyof typeof MOVES) =>
    (await db.pool.oneFirst(sql.type(Done)`select ${MOVES[step]} as done`)) === true;
  const rebuild = async () =>
    (await db.pool.oneFirst(sql.type(Done)`select chronomap_day_cells_rebuild() as done`)) === true;
  const dayRows = () =>
    db.pool.oneFirst(sql.type(Count)`select count(*)::int as n from event_cell_day_counts`);
  // A fresh resolver each time: one keeps the modes it read for a minute.
  const dayCellsRead = async () =>
    (
      await scopeResolver(db.pool, {}).scopeOf(
        SEES_EVERYTHING,
        parseEventFilter({ bounds: JSON.stringify(EUROPE) }),
      )
    ).dayCells;
  let next = 0;
  /** `count` events in Europe on days spread over 2023-2024, at hours that cut days. */
  const addEvents = async (dataset: number, count: number) => {
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      select id, catalog_id, 'day-' || (${next} + g), 'added', '{}'::jsonb,
             st_setsrid(st_makepoint(-4 + ((${next} + g) * 1.37) % 23, 41 + ((${next} + g) * 0.73) % 18), 4326),
             timestamptz '2023-01-03T07:00:00Z' + (${next} + g) * interval '97 hours'
      from datasets cross join generate_series(1, ${count}) g
      where id = ${dataset}`);
    next += count;
  };
  const pendingDataset = async (slug: string) =>
    db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
      insert into datasets (catalog_id, slug, title, is_public, counts_pending)
      values (${catalogId}, ${slug}, ${slug}, true, true) returning id`);

  const inBox = sql.fragment`st_intersects(location, st_makeenvelope(${EUROPE.west}, ${EUROPE.south}, ${EUROPE.east}, ${EUROPE.north}, 4326))`;
  const inWindow = sql.fragment`event_timestamp >= ${WINDOW.startDate}::timestamptz and event_timestamp <= ${WINDOW.endDate}::timestamptz`;
  /** The dated count, its weekly histogram and the box's first and last instants, as the reader gives them and as the events are. */
  async function answersAgree(t: Test, when: string): Promise<void> {
    const reader = postgresEventReader(db.pool, {});
    const dated = parseEventFilter({ bounds: JSON.stringify(EUROPE), ...WINDOW });
    const expectedCount = await db.pool.oneFirst(
      sql.type(Count)`select count(*)::int as n from events where ${inBox} and ${inWindow}`,
    );
    t.equal(
      await reader.countEvents(SEES_EVERYTHING, dated),
      expectedCount,
      `${when}: the dated count in the box`,
    );
    const bins = await reader.histogram(SEES_EVERYTHING, dated, {
      kind: 'fixed',
      originSeconds: 0,
      sizeSeconds: WEEK,
    });
    const expectedBins = await db.pool.any(sql.type(Bin)`
      select extract(epoch from date_bin(make_interval(secs => ${WEEK}), event_timestamp, to_timestamp(0)))::int8 as bin,
             count(*)::int as n
      from events where ${inBox} and ${inWindow} group by 1 order by 1`);
    t.same(
      [...bins.entries()].filter(([, n]) => n > 0).sort(([a], [b]) => a - b),
      expectedBins.map((b) => [b.bin, b.n]),
      `${when}: the weekly histogram, whose bins cut months`,
    );
    const range = await reader.timeRange(
      SEES_EVERYTHING,
      parseEventFilter({ bounds: JSON.stringify(EUROPE) }),
    );
    const expectedRange = await db.pool.one(sql.type(Range)`
      select min(event_timestamp)::text as min, max(event_timestamp)::text as max from events where ${inBox}`);
    t.same(
      [range?.min, range?.max].map((instant) => new Date(instant ?? 0).toISOString()),
      [expectedRange.min, expectedRange.max].map((instant) => new Date(instant).toISOString()),
      `${when}: the box's first and last instants`,
    );
  }

  await addEvents(datasetId, 300);
  t.equal(await mode(), 'kept', 'kept after the migration: nothing changes until a switch');
  t.ok((await dayRows()) > 0);
  t.equal(await dayCellsRead(), true, 'kept: the readers read the day cells');
  await answersAgree(t, 'kept');
  t.equal(await change('drop'), false, 'a kept table is not dropped without draining first');
  t.equal(await rebuild(), false, 'nor rebuilt');
  await t.rejects(
    db.pool.query(sql.unsafe`select chronomap_count_table_move('event_cell_day_counts', 'kept', 'off')`),
    /moves between kept and draining only/,
    'off is reached by a drop only',
  );

  t.equal(await change('drain'), true);
  t.equal(await mode(), 'draining');
  t.equal(await dayCellsRead(), false, 'draining: no reader reads the day cells');
  await addEvents(datasetId, 20);
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'day-3'`);
  await answersAgree(t, 'draining');
  await assertCountTablesExact(t, db.pool, 'draining: still written');
  t.equal(await change('keep'), true, 'a drain can be undone');
  t.equal(await dayCellsRead(), true);

  t.equal(await change('drain'), true);
  t.equal(await change('drop'), true);
  t.equal(await mode(), 'off');
  t.equal(await dayRows(), 0, 'off: the table is empty');
  t.equal(await dayCellsRead(), false, 'off: no reader reads the day cells');
  await addEvents(datasetId, 20);
  await db.pool.query(sql.unsafe`update events set event_timestamp = event_timestamp + interval '5 days'
                                 where unique_id = 'day-4'`);
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'day-5'`);
  const bulk = await pendingDataset('bulk-while-day-cells-off');
  await addEvents(bulk, 12);
  await db.pool.query(sql.unsafe`select chronomap_refresh_dataset_counts(${bulk})`);
  t.equal(await dayRows(), 0, 'no writer writes the day cells while off: triggers and refresh');
  await assertCountTablesExact(t, db.pool, 'day cells off, after inserts, an update, a delete and a refresh');
  await answersAgree(t, 'off');

  t.equal(await rebuild(), true);
  t.equal(await mode(), 'kept');
  await assertCountTablesExact(t, db.pool, 'day cells rebuilt');
  t.equal(await dayCellsRead(), true, 'rebuilt: read again');
  await addEvents(datasetId, 10);
  await assertCountTablesExact(t, db.pool, 'day cells kept again, after inserts');
  await answersAgree(t, 'rebuilt');
});

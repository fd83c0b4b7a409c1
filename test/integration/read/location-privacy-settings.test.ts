import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import type { Requester } from '../../helpers/accounts.ts';
import { ALL, GROUP, PAIR, type Point, setUp } from '../../helpers/location-privacy.ts';

// Keeping the generalised locations right (issue 38 §4): the owner's settings are an owner-only
// write of the dataset (PATCH /api/datasets/{id}); a change recomputes every event, moves the tile
// URLs and the export version; events added, moved or deleted recompute the counts per cell.

async function located(get: Requester): Promise<Point[]> {
  const response = await get('GET', '/api/v1/events?limit=100');
  return response
    .json()
    .events.flatMap((e: { location: { longitude: number; latitude: number } | null }) =>
      e.location ? [[e.location.longitude, e.location.latitude]] : [],
    );
}

async function tileUrl(get: Requester): Promise<string> {
  return (await get('GET', '/api/v1/tiles.json')).json().tiles[0];
}

t.test('settings are the owner’s, and every change shows at once', async (t) => {
  const { as, db, login, owner, stranger, centre } = await setUp(t);
  const anonymous = as(null);
  const mine = as(await login(owner));
  const theirs = as(await login(stranger));
  const id = await db.pool.oneFirst(sql.unsafe`select id from datasets where slug = 'sightings'`);

  const refused = await theirs('PATCH', `/api/datasets/${id}`, { privacyCellMetres: null });
  t.ok([403, 404].includes(refused.statusCode), 'another user may not lift the privacy');
  const unnamed = await anonymous('PATCH', `/api/datasets/${id}`, { privacyCellMetres: null });
  t.ok([401, 403, 404].includes(unnamed.statusCode), 'nor may an anonymous caller');
  const bad = await mine('PATCH', `/api/datasets/${id}`, { privacyCellMetres: 1 });
  t.equal(bad.statusCode, 400, 'a cell under 10 m is refused');
  const read = await mine('GET', `/api/datasets/${id}`);
  t.equal(read.json().privacyCellMetres, 1000);
  t.equal(read.json().privacyMinCount, 3);

  t.equal((await located(anonymous)).length, GROUP.length, 'k = 3: the group only');
  const tilesBefore = await tileUrl(anonymous);
  const exportBefore = (await anonymous('GET', '/api/v1/events.geojson')).body;

  // k = 2: the pair shows too, at its cell's centre.
  const lowered = await mine('PATCH', `/api/datasets/${id}`, { privacyMinCount: 2 });
  t.equal(lowered.statusCode, 200, lowered.body);
  const now = await located(anonymous);
  t.equal(now.length, GROUP.length + PAIR.length, 'k = 2: the group and the pair');
  t.notOk(
    now.some((p) =>
      ALL.some((exact) => Math.abs(exact[0] - p[0]) < 1e-6 && Math.abs(exact[1] - p[1]) < 1e-6),
    ),
    'still no exact point',
  );
  t.not(await tileUrl(anonymous), tilesBefore, 'the tile URL changed with the settings');
  t.not((await anonymous('GET', '/api/v1/events.geojson')).body, exportBefore, 'so did the export');

  // A lone event's cell reaches k when two more events are written there; a delete takes it back.
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, 'late', 'late', '{}'::jsonb, st_setsrid(st_makepoint(13.6002, 52.3003), 4326),
           timestamptz '2025-03-01'
    from datasets d where d.slug = 'sightings'`);
  t.equal((await located(anonymous)).length, GROUP.length + PAIR.length + 2, 'a write reaches k');
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'late'`);
  t.equal((await located(anonymous)).length, GROUP.length + PAIR.length, 'a delete falls under k');
  // A moved event leaves its cell: the group keeps four, the old cell centre stays.
  await db.pool.query(sql.unsafe`
    update events set location = st_setsrid(st_makepoint(2.35, 48.85), 4326) where unique_id = 'e1'`);
  const moved = await located(anonymous);
  t.equal(moved.length, GROUP.length - 1 + PAIR.length, 'a move recomputes both cells');
  t.ok(
    moved.some((p) => Math.abs(p[0] - centre[0]) < 1e-9),
    'the group is still at its centre',
  );

  // Lifted: everyone sees the exact points again, and the owner always did.
  await mine('PATCH', `/api/datasets/${id}`, { privacyCellMetres: null });
  t.equal((await located(anonymous)).length, ALL.length, 'no privacy: every point');
  t.equal((await located(mine)).length, ALL.length, 'the owner sees every point');
});

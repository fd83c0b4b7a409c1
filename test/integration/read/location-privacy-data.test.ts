import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { setUp } from '../../helpers/location-privacy.ts';

// Location privacy and the event's own data (issue 38 §4, migration 0885): an imported row keeps
// every column in `data`, the ones its location was read from included. Readers without write
// access to a dataset with privacy get `data` without those columns (the dataset's schema
// versions' mapping: latitude, longitude, coordinates, the address's columns or template), so the
// exact point cannot be read back from them; the owner keeps them.

type EventBody = { id: number; data: Record<string, unknown> };

t.test('the columns a location was read from leave the data of generalised events', async (t) => {
  const { as, db, login, owner, stranger } = await setUp(t);
  const id = Number(await db.pool.oneFirst(sql.unsafe`select id from datasets where slug = 'sightings'`));
  // As an import would have stored them: the coordinates and an address template's columns kept.
  await db.pool.query(sql.unsafe`
    update events set data = jsonb_build_object('lat', st_y(location), 'lon', st_x(location),
                                                'street', 'Hauptstraße ' || id, 'city', 'Jena', 'note', 'seen')
    where dataset_id = ${id}`);
  await db.pool.query(sql.unsafe`
    insert into dataset_schema_versions (dataset_id, version, fields, mapping)
    values (${id}, 1, '[]'::jsonb, '{"timestamp": "when", "latitude": "lat", "longitude": "lon",
                                   "address": "{street}, {city}", "title": "what"}'::jsonb)`);
  const keysOf = (data: Record<string, unknown>) => Object.keys(data).sort();
  const everyKeys = async (get: ReturnType<typeof as>) =>
    ((await get('GET', '/api/v1/events?datasets=sightings&limit=100')).json().events as EventBody[]).map(
      (event) => keysOf(event.data),
    );

  for (const [who, get] of [
    ['anonymous', as(null)],
    ['another user', as(await login(stranger))],
  ] as const) {
    const lists = await everyKeys(get);
    t.ok(lists.length > 0, `${who}: events`);
    t.same([...new Set(lists.map((keys) => keys.join()))], ['note'], `${who}: /api/v1/events, only the note`);
    const first = (await get('GET', '/api/v1/events?datasets=sightings&limit=1')).json()
      .events[0] as EventBody;
    const one = await get('GET', `/api/v1/events/${first.id}`);
    t.same(keysOf(one.json().event.data), ['note'], `${who}: /api/v1/events/{id}`);
    t.equal(one.json().event.locatedBy, null, `${who}: and nothing says how it was located`);
    const item = await get('GET', `/ogc/collections/sightings/items/${first.id}`);
    t.equal(item.statusCode, 200);
    const properties = Object.keys(item.json().properties).filter((key) => key.startsWith('data'));
    t.notOk(
      properties.some((key) => /lat|lon|street|city/.test(key)),
      `${who}: the OGC item has none of them (${properties.join(', ')})`,
    );
    const exported = await get('GET', '/api/v1/events.geojson?datasets=sightings');
    t.notMatch(exported.body, /"lat"|"lon"|Hauptstraße/, `${who}: nor the GeoJSON export`);
  }

  const mine = as(await login(owner));
  t.same(
    [...new Set((await everyKeys(mine)).map((keys) => keys.join()))],
    ['city,lat,lon,note,street'],
    'the owner reads every column',
  );
});

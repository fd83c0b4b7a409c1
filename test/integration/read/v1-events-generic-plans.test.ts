import t from 'tap';
import { Type } from 'typebox';
import { createDatabasePool, row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import type { RawQuery } from '../../../src/domain/read/read-query.ts';
import type { EventReader, Viewer } from '../../../src/ports/read/event-reader.ts';
import { readTextPage, type TextPage } from '../../helpers/event-pages.ts';
import { testDatabase } from '../../helpers/database.ts';
import { expectedEvents, loadReadFixture } from '../../helpers/v1-fixture.ts';

// The /events page statements over everything or a large catalog, sorted by time, run on a pool of
// generic-plan sessions (createDatabasePool's genericPlans; read/page.ts, pageAnswer): planned
// once per connection. Their answers must be exactly those of custom plans and of the fixture, and
// every other page (datasets, small catalogs, other sorts) must stay on the custom-plan pool.

/** A page read from the database, as text. */
const ask = (reader: EventReader, query: RawQuery, viewer: Viewer = null): Promise<TextPage> =>
  readTextPage(reader, query, viewer, { fresh: true });

const Statement = row(
  Type.Object({ name: Type.String(), generic_plans: Type.Number(), custom_plans: Type.Number() }),
);
const Setting = row(Type.Object({ plan_cache_mode: Type.String() }));

t.test('pages over everything or a large catalog use generic plans and give the same answers', async (t) => {
  const db = await testDatabase(t);
  const fixture = await loadReadFixture(db.pool);
  // A catalog of 3 of the 409 events (under a tenth of them): its pages keep custom plans.
  const tiny = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into catalogs (slug, title, is_public) values ('tiny', 'Tiny', true) returning id`);
  const tinyDataset = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into datasets (catalog_id, slug, title, is_public) values (${tiny}, 'odd', 'Odd "quoted" \\ title', true)
    returning id`);
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp, is_valid)
    values (${tinyDataset}, ${tiny}, 'odd-1', 'Quote " and \\ backslash', '{"text": "Zürich \\"quoted\\"\\n", "nested": {"list": [1, 2.5, null]}}',
            null, '2024-02-29T23:59:59.999Z', false),
           (${tinyDataset}, ${tiny}, 'odd-2', null, '{}', st_setsrid(st_makepoint(-0.000001, 89.9), 4326),
            '2024-03-01T00:00:00.000123Z', true),
           (${tinyDataset}, ${tiny}, 'odd-3', 'odd', '{}', st_setsrid(st_makepoint(179.999, -85.5), 4326),
            '2023-05-05T05:05:05Z', true)`);

  const generic = await createDatabasePool(db.url, { maximumPoolSize: 1, genericPlans: true });
  t.teardown(() => generic.end());
  t.equal(
    await generic.oneFirst(sql.type(Setting)`show plan_cache_mode`),
    'force_generic_plan',
    'the generic-plan pool forces generic plans',
  );
  t.equal(await db.pool.oneFirst(sql.type(Setting)`show plan_cache_mode`), 'auto', 'the main pool does not');
  // One connection: its prepared statements are those of every page it read.
  const prepared = () =>
    generic.any(sql.type(Statement)`
      select name, generic_plans, custom_plans from pg_prepared_statements order by name`);
  const withGeneric = postgresEventReader(db.pool, { genericPlanPool: generic });
  const custom = postgresEventReader(db.pool);

  const stayCustom: Record<string, RawQuery> = {
    'a small catalog': { catalog: 'tiny' },
    'a small catalog and a window': { catalog: 'tiny', startDate: '2024-01-01', endDate: '2024-12-31' },
    datasets: { datasets: 'protests,fires', startDate: '2023-06-01', endDate: '2024-06-01' },
    'sorted by id': { sort: 'id', limit: '7' },
    'sorted by data': { catalog: 'news', sort: '-data.mag', limit: '5' },
    'a custom date field': { catalog: 'science', dateField: 'data.startDate', startDate: '2023-06-01' },
  };
  for (const [name, query] of Object.entries(stayCustom))
    t.same(await ask(withGeneric, query), await ask(custom, query), `${name}: the same page`);
  t.same(await prepared(), [], 'none of those ran on the generic-plan pool');

  const generics: Record<string, RawQuery> = {
    everything: {},
    'everything, ascending': { sort: 'eventTimestamp', limit: '9', page: '4' },
    'a window': { startDate: '2023-03-04T05:06:07Z', endDate: '2024-11-12T13:14:15Z', limit: '20' },
    'a catalog': { catalog: 'news' },
    'a catalog and a window, page 3': {
      catalog: 'news',
      startDate: '2023-02-01',
      endDate: '2024-10-31T18:00:00Z',
      limit: '10',
      page: '3',
    },
    'the other catalog, one day': { catalog: 'science', startDate: '2024-06-15', endDate: '2024-06-15' },
    'a window without events': { catalog: 'news', startDate: '2030-01-01', endDate: '2031-01-01' },
    'beyond the last page': { catalog: 'science', limit: '50', page: '9' },
  };
  // Each asked several times, so that a session that chose plans by itself would have chosen by now.
  for (let round = 0; round < 3; round += 1)
    for (const [name, query] of Object.entries(generics))
      t.same(await ask(withGeneric, query), await ask(custom, query), `${name}: the same page (${round})`);
  const statements = await prepared();
  t.ok(statements.length >= 3, 'those ran on the generic-plan pool');
  t.ok(
    statements.every((s) => s.generic_plans > 0 && s.custom_plans === 0),
    'with generic plans only',
  );

  // Independently of any plan: the events and the total the fixture gives.
  const from = '2023-02-01T00:00:00Z';
  const to = '2024-10-31T18:00:00.001Z';
  const expected = expectedEvents(fixture, { catalog: 'news', from, to }).sort(
    (a, b) => b.eventTimestamp.localeCompare(a.eventTimestamp) || b.id - a.id,
  );
  const page = await ask(withGeneric, generics['a catalog and a window, page 3'] ?? {});
  t.equal(page.totalDocs, expected.length, 'the total of the window');
  t.same(
    (JSON.parse(page.eventsJson) as Array<{ id: number }>).map((event) => event.id),
    expected.slice(20, 30).map((event) => event.id),
    'the third page of ten, newest first',
  );

  // The JSON text the database writes, field by field.
  const odd = JSON.parse((await ask(withGeneric, { catalog: 'tiny', sort: 'eventTimestamp' })).eventsJson);
  const dataset = { id: tinyDataset, title: 'Odd "quoted" \\ title', catalog: 'tiny' };
  t.same(
    // The provenance's times are the database's (checked in event-provenance.test.ts): its shape here.
    odd.map(
      (event: { id: unknown; provenance: { storedAt: unknown; changedAt: unknown; page: string } }) => ({
        ...event,
        id: typeof event.id,
        provenance: {
          ...event.provenance,
          storedAt: typeof event.provenance.storedAt,
          changedAt: typeof event.provenance.changedAt,
          page: event.provenance.page === `/events/${String(event.id)}/provenance`,
        },
      }),
    ),
    [
      {
        id: 'number',
        title: 'odd',
        dataset,
        data: {},
        location: { longitude: 179.999, latitude: -85.5 },
        locatedBy: { method: 'coordinates' },
        eventTimestamp: '2023-05-05T05:05:05.000Z',
        isValid: true,
        provenance: {
          shown: true,
          importJob: null,
          row: null,
          storedAt: 'string',
          changedAt: 'string',
          page: true,
        },
      },
      {
        id: 'number',
        title: 'Quote " and \\ backslash',
        dataset,
        data: { text: 'Zürich "quoted"\n', nested: { list: [1, 2.5, null] } },
        location: null,
        locatedBy: null,
        eventTimestamp: '2024-02-29T23:59:59.999Z',
        isValid: false,
        provenance: {
          shown: true,
          importJob: null,
          row: null,
          storedAt: 'string',
          changedAt: 'string',
          page: true,
        },
      },
      {
        id: 'number',
        title: null,
        dataset,
        data: {},
        location: { longitude: -0.000001, latitude: 89.9 },
        locatedBy: { method: 'coordinates' },
        eventTimestamp: '2024-03-01T00:00:00.000Z',
        isValid: true,
        provenance: {
          shown: true,
          importJob: null,
          row: null,
          storedAt: 'string',
          changedAt: 'string',
          page: true,
        },
      },
    ],
    'every field of every event, escapes and nulls included',
  );
});

import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import {
  type ExpectedFilter,
  expectedEvents,
  type Fixture,
  getJson,
  loadReadFixture,
} from '../../helpers/v1-fixture.ts';

// OGC API – Features under /ogc over HTTP: the landing page's links, conformance, the collections
// (the viewer's datasets), a collection's extent, items with bbox, datetime, limit and the paging
// links walked to the end, single items, and every bad or unsupported parameter as a 400 naming it.

const BASE = 'http://localhost/ogc';

t.test('OGC API – Features', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture: Fixture = await loadReadFixture(db.pool);
  // A private dataset in a private catalog: no collection for an anonymous caller.
  await db.pool.query(sql.unsafe`
    with c as (insert into catalogs (slug, title, is_public) values ('hidden', 'Hidden', false) returning id)
    insert into datasets (catalog_id, slug, title, is_public) select id, 'secret', 'Secret', false from c`);
  const itemsOf = (dataset: string) => `/ogc/collections/${dataset}/items`;

  t.test('landing page and conformance', async (t) => {
    const landing = await app.inject({ method: 'GET', url: '/ogc' });
    t.equal(landing.statusCode, 200);
    t.match(landing.headers['content-type'], /^application\/json/);
    const links = landing.json().links as Array<{ rel: string; href: string; type: string }>;
    const byRel = Object.fromEntries(links.map((link) => [link.rel, link]));
    t.equal(byRel.self?.href, BASE);
    t.equal(byRel['service-desc']?.href, 'http://localhost/api/openapi.json');
    t.match(byRel['service-desc']?.type, /^application\/vnd\.oai\.openapi\+json/);
    t.equal(byRel.conformance?.href, `${BASE}/conformance`);
    t.equal(byRel.data?.href, `${BASE}/collections`);
    const openapi = await app.inject({ method: 'GET', url: '/api/openapi.json' });
    t.equal(openapi.statusCode, 200, 'the service description answers');
    t.ok(openapi.json().paths['/ogc/collections/{collectionId}/items'], 'and describes the items route');

    const conformance = await getJson(app, '/ogc/conformance', { f: 'json' });
    t.equal(conformance.status, 200);
    t.same(conformance.body.conformsTo, [
      'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
      'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
      'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables',
      'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
      'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter',
      'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
      'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
      'http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2',
      'http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators',
      'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions',
      'http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/schemas',
    ]);
  });

  t.test('collections: the datasets the viewer may read, each with its links', async (t) => {
    const { status, body } = await getJson(app, '/ogc/collections');
    t.equal(status, 200);
    const ids = (body.collections as Array<{ id: string }>).map((collection) => collection.id).sort();
    t.same(ids, ['exhibitions', 'fires', 'protests'], 'the private dataset is not listed');
    const fires = (body.collections as Array<Record<string, unknown>>).find((c) => c.id === 'fires');
    t.match(fires, {
      title: 'Fires',
      itemType: 'feature',
      crs: ['http://www.opengis.net/def/crs/OGC/1.3/CRS84'],
    });
    t.same(
      (fires?.links as Array<{ rel: string; href: string; type: string }>).map((link) => [
        link.rel,
        link.href,
        link.type,
      ]),
      [
        ['self', `${BASE}/collections/fires`, 'application/json'],
        ['items', `${BASE}/collections/fires/items`, 'application/geo+json'],
        [
          'http://www.opengis.net/def/rel/ogc/1.0/queryables',
          `${BASE}/collections/fires/queryables`,
          'application/schema+json',
        ],
        ['describedby', `${BASE}/collections/fires/schema`, 'application/schema+json'],
      ],
    );
    // The list's extents: the box rounded outward to level-10 cells (at most a cell, ~0.36° of
    // longitude, wider; the top and bottom rows reach the poles) and the exact time range.
    for (const collection of body.collections as Array<{
      id: string;
      extent: { spatial: { bbox: number[][] }; temporal: { interval: string[][] } };
    }>) {
      const events = fixture.events.filter((event) => event.datasetSlug === collection.id);
      const located = events.filter((event) => event.longitude !== null && event.latitude !== null);
      const [west, south, east, north] = collection.extent.spatial.bbox[0] as [
        number,
        number,
        number,
        number,
      ];
      const lons = located.map((event) => event.longitude as number);
      const lats = located.map((event) => event.latitude as number);
      t.ok(west <= Math.min(...lons) && west > Math.min(...lons) - 0.36, `${collection.id}: west`);
      t.ok(east >= Math.max(...lons) && east < Math.max(...lons) + 0.36, `${collection.id}: east`);
      t.ok(south <= Math.min(...lats) && north >= Math.max(...lats), `${collection.id}: south and north`);
      const times = events.map((event) => Date.parse(event.eventTimestamp));
      t.same(
        (collection.extent.temporal.interval[0] as string[]).map((time) => Date.parse(time)),
        [Math.min(...times), Math.max(...times)],
        `${collection.id}: the time range`,
      );
    }
    const hidden = await getJson(app, '/ogc/collections/secret');
    t.equal(hidden.status, 404, 'a dataset the viewer may not read does not exist');
    t.equal(hidden.body.code, 'COLLECTION_NOT_FOUND');
    t.equal((await getJson(app, itemsOf('secret'))).status, 404);
    t.equal((await getJson(app, '/ogc/collections/nothing-here')).status, 404);
    for (const id of ['Fires', 'fires_', 'a--b']) {
      t.equal((await getJson(app, `/ogc/collections/${id}`)).status, 404, `not a slug: ${id.slice(0, 10)}`);
      t.equal((await getJson(app, itemsOf(id))).status, 404);
    }
  });

  t.test("a collection's extent is the one the list gives, around its events", async (t) => {
    const { status, body } = await getJson(app, '/ogc/collections/protests');
    t.equal(status, 200);
    const list = await getJson(app, '/ogc/collections');
    const listed = (list.body.collections as Array<{ id: string; extent: unknown }>).find(
      (c) => c.id === 'protests',
    );
    t.same(body.extent, listed?.extent, 'one extent in /collections and /collections/{id}');
    const events = fixture.events.filter((event) => event.datasetSlug === 'protests');
    const located = events.filter((event) => event.longitude !== null && event.latitude !== null);
    const lons = located.map((event) => event.longitude as number);
    const lats = located.map((event) => event.latitude as number);
    const [west, south, east, north] = body.extent.spatial.bbox[0] as number[];
    t.ok((west ?? 0) <= Math.min(...lons) && (east ?? 0) >= Math.max(...lons), 'the box holds every event');
    t.ok((south ?? 0) <= Math.min(...lats) && (north ?? 0) >= Math.max(...lats));
    t.equal(body.extent.spatial.crs, 'http://www.opengis.net/def/crs/OGC/1.3/CRS84');
    const times = events.map((event) => Date.parse(event.eventTimestamp));
    const [first, last] = body.extent.temporal.interval[0] as string[];
    t.equal(Date.parse(first ?? ''), Math.min(...times));
    t.equal(Date.parse(last ?? ''), Math.max(...times));
  });

  t.test('items: GeoJSON features, counts, and the next links walked to the end', async (t) => {
    const response = await app.inject({ method: 'GET', url: `${itemsOf('fires')}?limit=25` });
    t.equal(response.statusCode, 200);
    t.match(response.headers['content-type'], /^application\/geo\+json/);
    const page = response.json();
    const expected = expectedEvents(fixture, { datasets: ['fires'] });
    t.equal(page.type, 'FeatureCollection');
    t.equal(page.numberMatched, expected.length);
    t.equal(page.numberReturned, 25);
    t.notOk('timeStamp' in page, 'no timeStamp: the answer is a function of the data (its ETag holds)');
    const feature = page.features[0];
    const event = fixture.events.find((candidate) => candidate.id === feature.id);
    t.ok(event, 'the feature id is the event id');
    t.equal(feature.properties.dataset, 'fires');
    t.equal(feature.properties.catalog, 'news');
    t.same(feature.properties.data, event?.data);
    t.equal(Date.parse(feature.properties.eventTimestamp), Date.parse(event?.eventTimestamp ?? ''));
    if (event?.longitude === null) t.equal(feature.geometry, null);
    else t.same(feature.geometry.type, 'Point');
    const located = page.features.filter((f: { geometry: unknown }) => f.geometry === null);
    t.ok(located.length <= page.features.length);

    // Follow next links from the first page to the last: every event exactly once, in id order.
    const seen: number[] = [];
    let url: string | undefined = `${itemsOf('fires')}?limit=25`;
    let pages = 0;
    let previous: string | undefined;
    while (url) {
      const body = (await app.inject({ method: 'GET', url: url.replace('http://localhost', '') })).json();
      pages += 1;
      seen.push(...body.features.map((f: { id: number }) => f.id));
      const links = body.links as Array<{ rel: string; href: string }>;
      t.equal(
        links.find((link) => link.rel === 'prev')?.href,
        previous,
        `page ${pages}: prev is the page before`,
      );
      t.ok(links.some((link) => link.rel === 'collection' && link.href === `${BASE}/collections/fires`));
      previous = links.find((link) => link.rel === 'self')?.href;
      url = links.find((link) => link.rel === 'next')?.href;
      if (pages > 20) break;
    }
    t.equal(pages, Math.ceil(expected.length / 25));
    t.same(
      seen,
      expected.map((e) => e.id).sort((a, b) => a - b),
      'every event once, ordered by id',
    );
  });

  t.test('bbox and datetime filter as /api/v1 startDate, endDate and bounds do', async (t) => {
    const cases: Array<{ params: Record<string, string>; expected: ExpectedFilter; name?: string }> = [
      {
        params: { bbox: '-20,30,40,70' },
        expected: { bounds: { west: -20, south: 30, east: 40, north: 70 } },
      },
      {
        params: { bbox: '170,-30,-170,0' },
        expected: { bounds: { west: 170, south: -30, east: -170, north: 0 } },
        name: 'across the antimeridian',
      },
      {
        params: { datetime: '2023-03-17T13:45:00Z/2024-02-09T08:00:00Z' },
        expected: { from: '2023-03-17T13:45:00Z', to: '2024-02-09T08:00:00.001Z' },
      },
      { params: { datetime: '../2023-06-30' }, expected: { to: '2023-07-01T00:00:00Z' } },
      { params: { datetime: '2024-06-01/..' }, expected: { from: '2024-06-01T00:00:00Z' } },
      {
        params: { datetime: '2024-06-15' },
        expected: { from: '2024-06-15T00:00:00Z', to: '2024-06-16T00:00:00Z' },
      },
      {
        params: { datetime: '2024-06-15T14:00:00.000Z' },
        expected: { from: '2024-06-15T14:00:00Z', to: '2024-06-15T14:00:00.001Z' },
        name: 'an instant: the events at it',
      },
      {
        params: { bbox: '0,40,20,60', datetime: '2023-06-01/2024-06-30' },
        expected: {
          bounds: { west: 0, south: 40, east: 20, north: 60 },
          from: '2023-06-01T00:00:00Z',
          to: '2024-07-01T00:00:00Z',
        },
      },
    ];
    for (const { params, expected, name } of cases) {
      const { status, body } = await getJson(app, itemsOf('protests'), { ...params, limit: '1000' });
      const want = expectedEvents(fixture, { datasets: ['protests'], ...expected });
      t.equal(status, 200, name ?? JSON.stringify(params));
      t.equal(body.numberMatched, want.length, `${name ?? JSON.stringify(params)}: numberMatched`);
      t.same(
        body.features.map((f: { id: number }) => f.id),
        want.map((e) => e.id).sort((a, b) => a - b),
        `${name ?? JSON.stringify(params)}: the features`,
      );
    }
    t.ok(
      expectedEvents(fixture, {
        datasets: ['protests'],
        from: '2024-06-15T14:00:00Z',
        to: '2024-06-15T14:00:00.001Z',
      }).length > 0,
    );
  });

  t.test('limit above the maximum is clamped, and the next link keeps the filters', async (t) => {
    const { status, body } = await getJson(app, itemsOf('protests'), {
      limit: '5000',
      bbox: '-180,-90,180,90',
    });
    t.equal(status, 200);
    const self = body.links.find((link: { rel: string }) => link.rel === 'self');
    t.match(self.href, /limit=1000/);
    t.match(self.href, /bbox=-180%2C-90%2C180%2C90/);
    const small = await getJson(app, itemsOf('protests'), { limit: '3', datetime: '2023-01-01/..' });
    const next = small.body.links.find((link: { rel: string }) => link.rel === 'next');
    t.equal(next.href, `${BASE}/collections/protests/items?datetime=2023-01-01%2F..&limit=3&offset=3`);
  });

  t.test('single items', async (t) => {
    const event = fixture.events.find((e) => e.datasetSlug === 'exhibitions' && e.longitude !== null);
    if (!event) throw new Error('no located exhibition');
    const response = await app.inject({ method: 'GET', url: `${itemsOf('exhibitions')}/${event.id}` });
    t.equal(response.statusCode, 200);
    t.match(response.headers['content-type'], /^application\/geo\+json/);
    const feature = response.json();
    t.equal(feature.type, 'Feature');
    t.equal(feature.id, event.id);
    t.same(
      feature.geometry.coordinates.map((n: number) => Math.round(n * 1e6)),
      [Math.round((event.longitude ?? 0) * 1e6), Math.round((event.latitude ?? 0) * 1e6)],
    );
    t.same(feature.properties.data, event.data);
    t.ok(
      feature.links.some(
        (l: { rel: string; href: string }) => l.rel === 'self' && l.href.endsWith(`/items/${event.id}`),
      ),
    );
    const unlocated = fixture.events.find((e) => e.longitude === null);
    if (unlocated) {
      const body = (await getJson(app, `${itemsOf(unlocated.datasetSlug)}/${unlocated.id}`)).body;
      t.equal(body.geometry, null, 'an event without a location has a null geometry');
    }
    for (const id of [String(event.id + 1_000_000), 'abc', '0', '-1', '1.5']) {
      const { status, body } = await getJson(app, `${itemsOf('exhibitions')}/${id}`);
      t.equal(status, 404, `feature ${id}`);
      t.equal(body.code, 'FEATURE_NOT_FOUND');
    }
    const unknown = await getJson(app, `/ogc/collections/nothing-here/items/${event.id}`);
    t.match(
      unknown,
      { status: 404, body: { code: 'COLLECTION_NOT_FOUND' } },
      'an unknown collection says so',
    );
    const other = fixture.events.find((e) => e.datasetSlug === 'fires');
    t.equal(
      (await getJson(app, `${itemsOf('exhibitions')}/${other?.id}`)).status,
      404,
      "another collection's event",
    );
  });

  t.test('bad and unsupported parameters: 400 naming them', async (t) => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      [itemsOf('fires'), { bbox: '0,0,0,10,10,100' }, /3D/],
      [itemsOf('fires'), { bbox: '0,0,10' }, /bbox/],
      [itemsOf('fires'), { bbox: '' }, /bbox is empty/],
      [itemsOf('fires'), { bbox: ' ' }, /bbox is empty/],
      [itemsOf('fires'), { bbox: '0,50,10,40' }, /bbox minLat/],
      [itemsOf('fires'), { datetime: 'last week' }, /datetime/],
      [itemsOf('fires'), { datetime: '2024-06-01/2024-01-01' }, /datetime/],
      [itemsOf('fires'), { datetime: '../..' }, /datetime/],
      [itemsOf('fires'), { limit: '0' }, /limit/],
      [itemsOf('fires'), { limit: 'many' }, /limit/],
      [itemsOf('fires'), { offset: '5', limit: '10' }, /offset must be a multiple of limit/],
      [
        itemsOf('fires'),
        { crs: 'http://www.opengis.net/def/crs/EPSG/0/4326' },
        /crs \(OGC API – Features Part 2/,
      ],
      [itemsOf('fires'), { 'bbox-crs': 'x', bbox: '0,0,1,1' }, /bbox-crs/],
      // Part 3 is implemented (ogc-cql2.test.ts): a property the collection's queryables lack is named.
      [
        itemsOf('fires'),
        { filter: 'mag > 5', 'filter-lang': 'cql2-text' },
        /unknown property "mag".*queryables/,
      ],
      [itemsOf('fires'), { sortby: '-eventTimestamp' }, /sortby/],
      [itemsOf('fires'), { properties: 'mag' }, /properties/],
      [itemsOf('fires'), { mag: '5' }, /unknown parameter "mag"/],
      [itemsOf('fires'), { f: 'html' }, /f=html is not offered/],
      ['/ogc', { f: 'html' }, /f=html/],
      ['/ogc/collections', { f: 'xml' }, /f must be json/],
      ['/ogc/conformance', { limit: '10' }, /unknown parameter "limit"/],
    ];
    for (const [path, params, message] of cases) {
      const { status, body } = await getJson(app, path, params);
      t.equal(status, 400, `${path} ${JSON.stringify(params)}`);
      t.match(body, { error: 'Bad Request', message }, `${path} ${JSON.stringify(params)}: the message`);
    }
    const twice = await app.inject({ method: 'GET', url: `${itemsOf('fires')}?bbox=0,0,1,1&bbox=0,0,2,2` });
    t.equal(twice.statusCode, 400, 'a parameter given twice');
    // Parameters are checked before the collection is looked up.
    t.equal((await getJson(app, itemsOf('nothing-here'), { bbox: '1,2,3' })).status, 400);
  });
  t.test('an extent follows its events: a delete at the edge narrows it, a move widens it', async (t) => {
    const bbox = async () => {
      const { body } = await getJson(app, '/ogc/collections/exhibitions');
      return body.extent.spatial.bbox[0] as [number, number, number, number];
    };
    const lons = fixture.events
      .filter((event) => event.datasetSlug === 'exhibitions' && event.longitude !== null)
      .map((event) => event.longitude as number)
      .sort((a, b) => a - b);
    const cut = (lons[0] ?? 0) + 1;
    const remaining = lons.filter((lon) => lon >= cut);
    t.ok(
      remaining.length > 1 && (remaining[0] ?? 0) - (lons[0] ?? 0) > 0.72,
      'the fixture has a west edge to cut',
    );
    t.ok((await bbox())[0] <= (lons[0] ?? 0), 'before: the west edge holds the westernmost event');
    await db.pool.query(sql.unsafe`
      delete from events e using datasets d
      where d.id = e.dataset_id and d.slug = 'exhibitions' and st_x(e.location) < ${cut}`);
    const [west] = await bbox();
    const first = remaining[0] ?? 0;
    t.ok(
      west <= first && west > first - 0.36,
      `after the delete: west ${west} is the new westernmost event's cell`,
    );
    await db.pool.query(sql.unsafe`
      update events e set location = st_setsrid(st_makepoint(179.5, 10), 4326)
      where e.id = (select min(x.id) from events x join datasets d on d.id = x.dataset_id
                    where d.slug = 'exhibitions' and x.location is not null)`);
    const [, , east] = await bbox();
    t.ok(east >= 179.5, `after the move: east ${east} holds the moved event`);
    await assertCountTablesExact(t, db.pool, 'after the delete and the move');
  });
});

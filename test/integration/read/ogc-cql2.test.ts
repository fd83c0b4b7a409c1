import t from 'tap';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { loadQuakes } from '../../helpers/ogc-quakes.ts';

// OGC API – Features Part 3 and Part 5 against PostGIS: typed properties on items (the same on every
// read and every page), queryables and the feature schema, and each CQL2 operator in both encodings
// compared with the events it must select; bad filters answer 400 with the error body.

t.test('typed properties, queryables and CQL2 filters on /ogc', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const ids = await loadQuakes(db.pool);
  const [alpha, beta, gamma, clash, delta] = ids as [number, number, number, number, number];
  const items = async (params: Record<string, string>) => {
    const search = new URLSearchParams(params);
    const response = await app.inject({ method: 'GET', url: `/ogc/collections/quakes/items?${search}` });
    return { status: response.statusCode, body: response.json() };
  };
  const matched = async (filter: string, lang = 'cql2-text') => {
    const { status, body } = await items({ filter, 'filter-lang': lang });
    t.equal(status, 200, `${filter}: 200 (${JSON.stringify(body).slice(0, 200)})`);
    t.equal(body.numberMatched, body.features?.length, `${filter}: numberMatched counts the page`);
    return ((body.features ?? []) as Array<{ id: number }>)
      .map((feature) => feature.id)
      .sort((a, b) => a - b);
  };

  t.test('typed properties: the fields converted to their types, a colliding name prefixed', async (t) => {
    const { status, body } = await items({});
    t.equal(status, 200);
    const byId = new Map(
      (body.features as Array<{ id: number; properties: Record<string, unknown> }>).map((f) => [
        f.id,
        f.properties,
      ]),
    );
    t.match(byId.get(alpha), {
      title: 'Alpha',
      mag: 4.5,
      depth: 10,
      place: 'Rome',
      felt: true,
      seen: '2024-01-02T00:00:00.000Z',
    });
    t.match(byId.get(gamma), { mag: 3, depth: null, felt: true, seen: '2024-03-04T12:00:00.000Z' });
    t.match(byId.get(clash), {
      title: null,
      data_title: 'clash',
      mag: null,
      felt: null,
      data: { title: 'clash' },
    });
    t.match(byId.get(delta), { felt: false, place: 'Tokyo 100%', data: { mag: 6 } });
    // QGIS-style: the same item read twice, and a later page, carry the same properties and types.
    const one = await app.inject({ method: 'GET', url: `/ogc/collections/quakes/items/${gamma}` });
    t.same(one.json().properties, byId.get(gamma), 'items/{id} has the page’s typed properties');
    const again = await app.inject({ method: 'GET', url: `/ogc/collections/quakes/items/${gamma}` });
    t.same(again.json().properties, one.json().properties, 'a second read is the same');
    const first = await items({ limit: '2' });
    const later = await items({ limit: '2', offset: '2' });
    const keys = (page: { features: Array<{ properties: object }> }) =>
      page.features.map((f) => Object.keys(f.properties).join(','));
    t.same(
      new Set([...keys(first.body), ...keys(later.body)]).size,
      1,
      'every feature of both pages has the same fields',
    );
  });

  t.test('the v1 GeoJSON export of one dataset carries the same typed properties', async (t) => {
    const ogc = await app.inject({ method: 'GET', url: '/ogc/collections/quakes/items' });
    const exported = await app.inject({ method: 'GET', url: '/api/v1/events.geojson?datasets=quakes' });
    t.equal(exported.statusCode, 200);
    // The export adds each event's provenance (issue 38 §5), which OGC items do not carry.
    const properties = (text: string) =>
      new Map(
        (JSON.parse(text).features as Array<{ id: number; properties: { provenance?: unknown } }>).map(
          (f) => {
            const { provenance: _provenance, ...rest } = f.properties;
            return [f.id, rest];
          },
        ),
      );
    t.same(properties(exported.body), properties(ogc.body), 'fixed, typed and data properties alike');
    t.match(JSON.parse(exported.body).features[0].properties.provenance, { shown: true });
    t.match(exported.body, /"mag":6\.0,/, 'a whole magnitude written as a real, as in OGC items');
    t.match(ogc.body, /"mag":6\.0,/);
    const all = await app.inject({ method: 'GET', url: '/api/v1/events.geojson' });
    const keys = JSON.parse(all.body).features.map((f: { properties: object }) =>
      Object.keys(f.properties).join(),
    );
    t.same(
      new Set(keys),
      new Set(['title,eventTimestamp,dataset,catalog,data,provenance']),
      'several datasets: no typed properties',
    );
  });

  t.test('queryables and schema', async (t) => {
    const queryables = await app.inject({ method: 'GET', url: '/ogc/collections/quakes/queryables' });
    t.equal(queryables.statusCode, 200);
    t.match(queryables.headers['content-type'], /^application\/schema\+json/);
    t.match(queryables.json().properties, {
      geometry: { format: 'geometry-point' },
      eventTimestamp: { type: 'string', format: 'date-time' },
      mag: { type: 'number' },
      depth: { type: 'integer' },
      felt: { type: 'boolean' },
      seen: { type: 'string', format: 'date-time' },
      data_title: { type: 'string', title: 'title' },
    });
    const schema = await app.inject({ method: 'GET', url: '/ogc/collections/quakes/schema' });
    t.equal(schema.statusCode, 200);
    t.match(schema.json().properties, {
      id: { 'x-ogc-role': 'id' },
      mag: { type: 'number' },
      data: { type: 'object' },
    });
    const collection = await app.inject({ method: 'GET', url: '/ogc/collections/quakes' });
    const rels = (collection.json().links as Array<{ rel: string }>).map((link) => link.rel);
    t.ok(rels.includes('describedby') && rels.includes('http://www.opengis.net/def/rel/ogc/1.0/queryables'));
    const conformance = (await app.inject({ method: 'GET', url: '/ogc/conformance' })).json().conformsTo;
    t.ok(conformance.includes('http://www.opengis.net/spec/cql2/1.0/conf/cql2-text'));
    t.ok(conformance.includes('http://www.opengis.net/spec/ogcapi-features-5/1.0/conf/schemas'));
    const missing = await app.inject({ method: 'GET', url: '/ogc/collections/nope/queryables' });
    t.equal(missing.statusCode, 404);
  });

  t.test('each operator, in cql2-text', async (t) => {
    t.same(await matched('mag > 3'), [alpha, delta]);
    t.same(await matched('mag >= 3'), [alpha, gamma, delta], 'a number written as text is a number');
    t.same(await matched('3 < mag'), [alpha, delta], 'a literal first is flipped');
    t.same(await matched('mag = 2.1'), [beta]);
    t.same(await matched('mag <> 2.1'), [alpha, gamma, delta], 'null is neither equal nor unequal');
    t.same(await matched('mag <= 2.1 OR depth = 5'), [beta, delta]);
    t.same(await matched('mag > 2 AND NOT felt = false'), [alpha, gamma]);
    t.same(await matched('depth BETWEEN 5 AND 10'), [alpha, delta]);
    t.same(await matched('depth NOT BETWEEN 5 AND 10'), [beta]);
    t.same(await matched("place IN ('Rome', 'Berlin')"), [alpha, gamma]);
    t.same(await matched("place LIKE 'O''%'"), [clash], 'a quote in a string');
    t.same(await matched("place LIKE '%\\%'"), [delta], 'an escaped % matches itself');
    t.same(await matched('mag IS NULL'), [clash]);
    t.same(await matched('title IS NOT NULL'), [alpha, beta, gamma, delta]);
    t.same(await matched("data_title = 'clash'"), [clash]);
    t.same(await matched('felt = TRUE'), [alpha, gamma]);
    t.same(await matched('"place" = \'Paris\''), [beta], 'a quoted property name');
    t.same(await matched('S_INTERSECTS(geometry, BBOX(0, 40, 14, 50))'), [alpha, beta]);
    t.same(
      await matched('S_INTERSECTS(geometry, BBOX(130, 0, -170, 60))'),
      [delta],
      'across the antimeridian',
    );
    t.same(await matched('S_INTERSECTS(geometry, POLYGON((10 40, 15 40, 15 55, 10 55, 10 40)))'), [
      alpha,
      gamma,
    ]);
    t.same(await matched('S_INTERSECTS(geometry, POINT(2.35 48.85))'), [beta]);
    t.same(
      await matched("T_INTERSECTS(eventTimestamp, INTERVAL('2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'))"),
      [beta, gamma],
    );
    t.same(await matched("T_INTERSECTS(eventTimestamp, INTERVAL('2024-03-01', '..'))"), [
      gamma,
      clash,
      delta,
    ]);
    t.same(await matched("T_INTERSECTS(eventTimestamp, DATE('2025-01-01'))"), [delta]);
    t.same(await matched("eventTimestamp < TIMESTAMP('2024-02-01T00:00:00Z')"), [alpha]);
    t.same(
      await matched("seen >= DATE('2024-02-01')"),
      [beta, gamma],
      'a date field, with and without a zone',
    );
    t.same(await matched(`id = ${beta}`), [beta]);
    t.same(await matched('TRUE'), ids);
  });

  t.test('cql2-json, and with bbox and datetime', async (t) => {
    const json = (value: unknown) => matched(JSON.stringify(value), 'cql2-json');
    t.same(await json({ op: '>', args: [{ property: 'mag' }, 3] }), [alpha, delta]);
    t.same(
      await json({
        op: 'and',
        args: [
          { op: 'in', args: [{ property: 'place' }, ['Rome', 'Paris']] },
          { op: 'not', args: [{ op: 'isNull', args: [{ property: 'felt' }] }] },
        ],
      }),
      [alpha, beta],
    );
    t.same(await json({ op: 'between', args: [{ property: 'mag' }, 2, 4] }), [beta, gamma]);
    t.same(await json({ op: 'like', args: [{ property: 'place' }, 'P%'] }), [beta]);
    t.same(
      await json({
        op: 's_intersects',
        args: [
          { property: 'geometry' },
          {
            type: 'Polygon',
            coordinates: [
              [
                [0, 40],
                [14, 40],
                [14, 50],
                [0, 50],
                [0, 40],
              ],
            ],
          },
        ],
      }),
      [alpha, beta],
    );
    t.same(
      await json({ op: 's_intersects', args: [{ property: 'geometry' }, { bbox: [100, 0, 150, 60] }] }),
      [delta],
    );
    t.same(
      await json({
        op: 't_intersects',
        args: [{ property: 'eventTimestamp' }, { interval: ['2024-01-01', '2024-02-01'] }],
      }),
      [alpha, beta],
    );
    const { body } = await items({
      filter: 'mag > 0',
      bbox: '0,40,14,50',
      datetime: '2024-01-15T00:00:00Z/..',
    });
    t.same(
      body.features.map((f: { id: number }) => f.id),
      [beta],
      'bbox and datetime narrow the filter',
    );
    const paged = await items({ filter: 'mag > 0', limit: '1' });
    const next = (paged.body.links as Array<{ rel: string; href: string }>).find(
      (link) => link.rel === 'next',
    );
    t.match(next?.href, /filter=mag\+%3E\+0/, 'the next link carries the filter');
  });

  t.test('bad filters: 400 with the error body, never a 5xx', async (t) => {
    const bad = [
      ['nosuch = 1', /unknown property "nosuch"/],
      ["mag = 'x'", /must be a number/],
      ['mag >', /expected/],
      ["place LIKE 'a\\'", /lone/],
      ['S_INTERSECTS(geometry, POLYGON((0 0, 1 0, 1 1)))', /ring/],
      ['S_INTERSECTS(geometry, POINT(200 0))', /longitude/],
      ["T_INTERSECTS(eventTimestamp, INTERVAL('2025-01-01', '2024-01-01'))", /start/],
      ["place = 'x' OR ".repeat(300) + "place = 'y'", /terms|longer/],
      ['('.repeat(50) + 'mag > 1' + ')'.repeat(50), /nested/],
      ['geometry = 1', /s_intersects/],
      ['mag > 1 extra', /expected/],
      ['eval(1)', /unknown function/],
    ] as const;
    for (const [filter, message] of bad) {
      const { status, body } = await items({ filter });
      t.equal(status, 400, filter.slice(0, 60));
      t.match(body, { error: 'Bad Request', code: 'InvalidParameterValue' }, 'the spec’s error body');
      t.match(body.message, message);
    }
    t.equal((await items({ filter: 'mag > 1', 'filter-lang': 'cql2-json' })).status, 400);
    t.equal((await items({ filter: '{"op":"~","args":[]}', 'filter-lang': 'cql2-json' })).status, 400);
    t.equal((await items({ filter: 'mag > 1', 'filter-lang': 'sql' })).status, 400);
    t.equal((await items({ filter: 'mag > 1', 'filter-crs': 'EPSG:3857' })).status, 400);
  });
});

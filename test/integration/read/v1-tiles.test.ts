import { VectorTile } from '@mapbox/vector-tile';
import type { FastifyInstance } from 'fastify';
import { PbfReader } from 'pbf';
import t from 'tap';
import { postgresEventReader } from '../../../src/adapters/postgres/read/index.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import { type Tile, tileBounds } from '../../../src/domain/read/tiles.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { getJson, loadReadFixture, type Params, SAME_SPOT } from '../../helpers/v1-fixture.ts';
import { mercatorCell } from '../../../src/domain/read/clustering.ts';

// GET /api/v1/tiles/{z}/{x}/{y}.mvt and /api/v1/tiles.json on a real PostGIS, the tiles decoded by
// @mapbox/vector-tile as a map client does: the tested invariant is that the counts of the tiles
// covering a view add up to /api/v1/events/geo's counts for the same view and zoom (and cluster by
// cluster, since a tile holds exactly the clusters /events/geo gives for its box), with every
// filter, on the row-by-row and on the precomputed (level-10 and level-16 cells) paths.

type Feature = { type: string; count: number; id?: number; title?: string; key?: string; eventIds?: string };

function decode(body: Buffer): Feature[] {
  const tile = new VectorTile(new PbfReader(body));
  const layer = tile.layers.events;
  if (!layer) return [];
  const features: Feature[] = [];
  for (let i = 0; i < layer.length; i += 1) features.push(layer.feature(i).properties as unknown as Feature);
  return features;
}

function query(params: Params): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  return search.size > 0 ? `?${search}` : '';
}

async function tileFeatures(app: FastifyInstance, tile: Tile, params: Params): Promise<Feature[]> {
  const response = await app.inject({
    method: 'GET',
    url: `/api/v1/tiles/${tile.z}/${tile.x}/${tile.y}.mvt${query(params)}`,
  });
  if (response.statusCode === 204) return [];
  if (response.statusCode !== 200) throw new Error(`tile ${tile.z}/${tile.x}/${tile.y}: ${response.body}`);
  return decode(response.rawPayload);
}

/** A block of tiles around a point and the exact box they cover. */
function block(
  z: number,
  lon: number,
  lat: number,
  radius: number,
): { tiles: Tile[]; bounds: Params[string] } {
  const size = 2 ** z;
  const centre = mercatorCell(lon, lat, z);
  const x0 = Math.max(0, centre.x - radius);
  const x1 = Math.min(size - 1, centre.x + radius);
  const y0 = Math.max(0, centre.y - radius);
  const y1 = Math.min(size - 1, centre.y + radius);
  const tiles: Tile[] = [];
  for (let x = x0; x <= x1; x += 1) for (let y = y0; y <= y1; y += 1) tiles.push({ z, x, y });
  const northWest = tileBounds({ z, x: x0, y: y0 });
  const southEast = tileBounds({ z, x: x1, y: y1 });
  return {
    tiles,
    bounds: { north: northWest.north, west: northWest.west, south: southEast.south, east: southEast.east },
  };
}

const FILTERS: Array<{ name: string; params: Params }> = [
  { name: 'everything', params: {} },
  { name: 'one catalog', params: { catalog: 'news' } },
  { name: 'two datasets, from a date', params: { datasets: ['protests', 'fires'], startDate: '2023-06-01' } },
  {
    name: 'a custom date field',
    params: { dateField: 'data.startDate', startDate: '2023-01-01', endDate: '2024-06-30' },
  },
  {
    name: 'dates cutting months',
    params: { startDate: '2023-02-10T10:00:00Z', endDate: '2024-07-20T18:30:00Z' },
  },
];

t.test('vector tiles on the fixture', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);

  t.test('the counts of the tiles covering a view equal /events/geo, cluster by cluster', async (t) => {
    const views = [
      ...[0, 1, 2, 3].map((z) => ({ z, ...block(z, 0, 0, 8) })),
      ...[4, 6, 8, 9, 10, 12, 13, 15, 16, 18, 22].map((z) => ({
        z,
        ...block(z, SAME_SPOT.longitude, SAME_SPOT.latitude, 1),
      })),
      { z: 5, ...block(5, 179.9, -16.3, 1) },
    ];
    for (const filter of FILTERS) {
      for (const view of views) {
        const geo = await getJson(app, '/api/v1/events/geo', {
          ...filter.params,
          bounds: view.bounds,
          zoom: String(view.z),
        });
        t.equal(geo.status, 200);
        t.equal(geo.body.capped, false);
        const features = (
          await Promise.all(view.tiles.map((tile) => tileFeatures(app, tile, filter.params)))
        ).flat();
        const sum = (counts: number[]) => counts.reduce((a, b) => a + b, 0);
        const geoCounts = geo.body.features.map(
          (f: { properties: { count?: number } }) => f.properties.count ?? 1,
        );
        t.equal(
          sum(features.map((f) => f.count)),
          sum(geoCounts),
          `${filter.name}, zoom ${view.z}: ${view.tiles.length} tiles`,
        );
        t.same(
          features.map((f) => f.count).sort((a, b) => a - b),
          [...geoCounts].sort((a, b) => a - b),
          `${filter.name}, zoom ${view.z}: the same clusters`,
        );
      }
    }
  });

  t.test('points carry their id and title, clusters their count, key and small id lists', async (t) => {
    const spot = mercatorCell(SAME_SPOT.longitude, SAME_SPOT.latitude, 16);
    const features = await tileFeatures(app, { z: 16, ...spot }, {});
    const pile = features.find((f) => f.type === 'event-cluster');
    t.ok(pile, 'the events at one exact spot are a cluster at zoom 16');
    t.ok((pile?.count ?? 0) >= 2);
    t.match(pile?.key, /^cluster:p:/);
    const world = (
      await Promise.all([0, 1].flatMap((x) => [0, 1].map((y) => tileFeatures(app, { z: 1, x, y }, {}))))
    ).flat();
    t.ok(world.every((f) => f.type === 'event-cluster' || f.type === 'event-point'));
    for (const feature of [...features, ...world]) {
      if (feature.type === 'event-point') {
        t.equal(feature.count, 1);
        t.type(feature.id, 'number');
        t.type(feature.title, 'string');
      } else {
        t.ok(feature.count >= 1);
        t.type(feature.key, 'string');
        if (feature.eventIds !== undefined)
          t.equal(feature.eventIds.split(',').length, feature.count, 'a small cluster lists its ids');
      }
    }
    const lone = fixture.events.find(
      (event) =>
        event.longitude !== null && event.latitude !== null && event.longitude !== SAME_SPOT.longitude,
    );
    if (!lone || lone.longitude === null || lone.latitude === null)
      throw new Error('the fixture has located events');
    const home = mercatorCell(lone.longitude, lone.latitude, 16);
    const points = await tileFeatures(app, { z: 16, ...home }, {});
    const point = points.find((f) => f.type === 'event-point' && f.id === lone.id);
    t.equal(point?.title, lone.title, 'a single event at zoom 16 with its id and title');
  });

  t.test('the precomputed cells answer the same tiles as the rows', async (t) => {
    const fine = postgresEventReader(db.pool, { fineCellsMinDensity: 0 });
    const rows = postgresEventReader(db.pool, { fineCellsMinDensity: Number.POSITIVE_INFINITY });
    for (const z of [2, 7, 9, 10, 11, 12, 13]) {
      for (const tile of block(z, SAME_SPOT.longitude, SAME_SPOT.latitude, 1).tiles) {
        const filter = parseEventFilter({});
        const [a, b] = await Promise.all([
          fine.vectorTile(null, filter, tile),
          rows.vectorTile(null, filter, tile),
        ]);
        const counts = (bytes: Uint8Array) =>
          decode(Buffer.from(bytes))
            .map((f) => f.count)
            .sort((x, y) => x - y);
        t.same(counts(a), counts(b), `zoom ${z} tile ${tile.x}/${tile.y}`);
      }
    }
  });

  t.test('a tile of more locations than its bound is clustered, with the same total', async (t) => {
    const crowded = postgresEventReader(db.pool, { tileMaxPoints: 2 });
    const plain = postgresEventReader(db.pool);
    const filter = parseEventFilter({});
    for (const tile of block(16, SAME_SPOT.longitude, SAME_SPOT.latitude, 1).tiles) {
      const [few, all] = await Promise.all([
        crowded.vectorTile(null, filter, tile),
        plain.vectorTile(null, filter, tile),
      ]);
      const features = { few: decode(Buffer.from(few)), all: decode(Buffer.from(all)) };
      const total = (list: Feature[]) => list.reduce((sum, f) => sum + f.count, 0);
      t.equal(total(features.few), total(features.all), `tile ${tile.x}/${tile.y}: the same events`);
      if (features.all.length > 2)
        t.ok(features.few.length < features.all.length, `tile ${tile.x}/${tile.y}: clustered`);
    }
  });

  t.test('headers, empty tiles and the TileJSON', async (t) => {
    const full = await app.inject({ method: 'GET', url: '/api/v1/tiles/0/0/0.mvt' });
    t.equal(full.statusCode, 200);
    t.equal(full.headers['content-type'], 'application/vnd.mapbox-vector-tile');
    // The middle of the Atlantic at zoom 12 holds nothing.
    const atlantic = mercatorCell(-35, 10, 12);
    const empty = await app.inject({
      method: 'GET',
      url: `/api/v1/tiles/12/${atlantic.x}/${atlantic.y}.mvt`,
    });
    t.equal(empty.statusCode, 204);
    t.equal(empty.rawPayload.length, 0);
    const nothing = await app.inject({
      method: 'GET',
      url: '/api/v1/tiles/0/0/0.mvt?catalog=no-such-catalog',
    });
    t.equal(nothing.statusCode, 204, 'a filter that matches nothing');

    const tileJson = await app.inject({
      method: 'GET',
      url: '/api/v1/tiles.json?catalog=news&datasets=protests&datasets=fires&startDate=2023-06-01',
      headers: { host: 'maps.example.org:8080' },
    });
    t.equal(tileJson.statusCode, 200);
    const body = tileJson.json();
    t.equal(body.tilejson, '3.0.0');
    // The data version first (v, digits-digits: tiles at this URL never change), then the filter.
    t.match(body.tiles, [
      /^http:\/\/maps\.example\.org:8080\/api\/v1\/tiles\/\{z\}\/\{x\}\/\{y\}\.mvt\?v=\d+-\d+&catalog=news&datasets=protests&datasets=fires&startDate=2023-06-01$/,
    ]);
    t.equal(body.tiles.length, 1);
    t.equal(body.minzoom, 0);
    t.equal(body.maxzoom, 16);
    t.equal(body.bounds.length, 4);
    t.equal(body.vector_layers[0].id, 'events');
    t.same(Object.keys(body.vector_layers[0].fields).sort(), [
      'count',
      'eventIds',
      'id',
      'key',
      'title',
      'type',
    ]);
    const hostile = await app.inject({
      method: 'GET',
      url: '/api/v1/tiles.json',
      headers: { host: 'evil.example/"><script>' },
    });
    t.equal(hostile.statusCode, 200);
    t.notMatch(hostile.json().tiles[0], /evil|script/, 'a malformed Host is not echoed');
  });

  t.test('behind a trusted TLS proxy the TileJSON names the address the client used', async (t) => {
    const proxied = await testApp(t, {
      config: { quotasFile: policyFile(t, unlimitedAnonymousReads), trustProxy: true },
    });
    const response = await proxied.app.inject({
      method: 'GET',
      url: '/api/v1/tiles.json?catalog=news',
      headers: {
        host: '127.0.0.1:3000',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'maps.example.org',
      },
    });
    t.equal(response.statusCode, 200);
    t.match(response.json().tiles, [
      /^https:\/\/maps\.example\.org\/api\/v1\/tiles\/\{z\}\/\{x\}\/\{y\}\.mvt\?v=\d+-\d+&catalog=news$/,
    ]);
    t.equal(response.json().tiles.length, 1);
  });

  t.test('bad tile coordinates and filters: 400 with the spec error body', async (t) => {
    const bad: Array<[string, string]> = [
      ['/api/v1/tiles/-1/0/0.mvt', 'z'],
      ['/api/v1/tiles/23/0/0.mvt', 'z'],
      ['/api/v1/tiles/abc/0/0.mvt', 'z'],
      ['/api/v1/tiles/1.5/0/0.mvt', 'z'],
      ['/api/v1/tiles/2/4/0.mvt', 'x'],
      ['/api/v1/tiles/2/0/4.mvt', 'y'],
      ['/api/v1/tiles/0/0/0.png', 'y'],
      ['/api/v1/tiles/0/0/0', 'y'],
      ['/api/v1/tiles/0/0/x.mvt', 'y'],
      ['/api/v1/tiles/0/0/0.mvt.mvt', 'y'],
      ['/api/v1/tiles/0/99999999999999999999/0.mvt', 'x'],
      ['/api/v1/tiles/0/0/0.mvt?startDate=yesterday', 'startDate'],
      ['/api/v1/tiles/0/0/0.mvt?bounds=%7B%7D', 'bounds'],
      ['/api/v1/tiles.json?endDate=2024-02-30', 'endDate'],
      ['/api/v1/tiles.json?zoom=3', 'zoom'],
    ];
    for (const [url, parameter] of bad) {
      const response = await app.inject({ method: 'GET', url });
      t.equal(response.statusCode, 400, url);
      const body = response.json();
      t.equal(body.error, 'Bad Request', url);
      t.type(body.message, 'string');
      t.match(`${body.message} ${body.details ?? ''}`, parameter, `${url} names ${parameter}`);
    }
  });
});

import { VectorTile } from '@mapbox/vector-tile';
import type { FastifyInstance } from 'fastify';
import { PbfReader } from 'pbf';
import { Compression, PMTiles, type RangeResponse, type Source, TileType } from 'pmtiles';
import t from 'tap';
import { TILE_ARCHIVE_MAX_ZOOM } from '../../../src/application/read/export-tile-archive.ts';
import { mercatorCell } from '../../../src/domain/read/clustering.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { getJson, loadReadFixture } from '../../helpers/v1-fixture.ts';

// GET /api/v1/events.pmtiles: the archive is read back by the npm `pmtiles` package (the reader the
// browser uses, independent of the writer) over HTTP ranges of the route itself, and every tile of
// zooms 0..12 is compared with /api/v1/tiles for the same view: the same features, counts and ids,
// tiles the archive lacks are empty there, and each zoom's counts add up to the view's located events.

type Event = { id: number; location: { longitude: number; latitude: number } | null };
type Feature = { type: string; count: number; id?: number };

function decode(body: Uint8Array): Feature[] {
  const layer = new VectorTile(new PbfReader(body)).layers.events;
  if (!layer) return [];
  return Array.from({ length: layer.length }, (_, i) => layer.feature(i).properties as unknown as Feature);
}

const sortFeatures = (features: Feature[]) =>
  features
    .map((feature) => `${feature.type}:${feature.count}:${feature.id ?? ''}`)
    .sort()
    .join(' ');

/** A `pmtiles` Source reading the export by HTTP range, as a map client does. */
class RouteSource implements Source {
  readonly app: FastifyInstance;
  readonly url: string;
  ranges = 0;
  constructor(app: FastifyInstance, url: string) {
    this.app = app;
    this.url = url;
  }
  getKey() {
    return this.url;
  }
  async getBytes(offset: number, length: number): Promise<RangeResponse> {
    const answer = await this.app.inject({
      method: 'GET',
      url: this.url,
      headers: { range: `bytes=${offset}-${offset + length - 1}` },
    });
    if (answer.statusCode !== 206) throw new Error(`range ${offset}+${length}: ${answer.statusCode}`);
    this.ranges += 1;
    const bytes = answer.rawPayload;
    return { data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer };
  }
}

async function tileOf(app: FastifyInstance, z: number, x: number, y: number, search: string) {
  const answer = await app.inject({ method: 'GET', url: `/api/v1/tiles/${z}/${x}/${y}.mvt?${search}` });
  if (answer.statusCode === 204) return [];
  if (answer.statusCode !== 200) throw new Error(`tile ${z}/${x}/${y}: ${answer.body}`);
  return decode(answer.rawPayload);
}

// About ten located events (one dataset, two months): about a hundred tiles.
const VIEW = { datasets: 'fires', startDate: '2023-01-01', endDate: '2023-02-28' };

t.test('a PMTiles archive of a view: the tiles of /api/v1/tiles, read back by range', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await loadReadFixture(db.pool);
  const search = new URLSearchParams(VIEW).toString();
  const events = (await getJson(app, '/api/v1/events', { ...VIEW, limit: '1000' })).body.events as Event[];
  const located = events.filter((event) => event.location !== null);
  t.ok(located.length >= 5 && located.length < 40, `a view of ${located.length} located events`);

  const url = `/api/v1/events.pmtiles?${search}`;
  const whole = await app.inject({ method: 'GET', url });
  t.equal(whole.statusCode, 200, whole.body.slice(0, 300));
  t.equal(whole.headers['content-type'], 'application/vnd.pmtiles');
  t.equal(Number(whole.headers['content-length']), whole.rawPayload.length, 'a kept file: its length');
  t.equal(whole.headers['accept-ranges'], 'bytes');
  t.equal(whole.rawPayload.subarray(0, 7).toString('latin1'), 'PMTiles', 'the magic bytes');
  const again = await app.inject({ method: 'GET', url });
  t.equal(again.headers.etag, whole.headers.etag, 'a repeated download: the same version');
  t.ok(again.rawPayload.equals(whole.rawPayload), 'and the same bytes (the kept file)');
  const sorted = await app.inject({ method: 'GET', url: `${url}&sort=-eventTimestamp` });
  t.ok(sorted.rawPayload.equals(whole.rawPayload), 'the sort is not part of a tile archive');

  const source = new RouteSource(app, url);
  const archive = new PMTiles(source);
  const header = await archive.getHeader();
  t.equal(header.tileType, TileType.Mvt);
  t.equal(header.tileCompression, Compression.Gzip);
  t.equal(header.minZoom, 0);
  t.equal(header.maxZoom, TILE_ARCHIVE_MAX_ZOOM);
  const metadata = (await archive.getMetadata()) as { vector_layers: Array<{ id: string }> };
  t.same(
    metadata.vector_layers.map((layer) => layer.id),
    ['events'],
  );

  // The pyramid from the top: each tile of the archive against /api/v1/tiles, and each child it
  // lacks is empty there too (an empty tile's children are empty: the invariant of the walk).
  let level = [{ z: 0, x: 0, y: 0 }];
  let compared = 0;
  let mismatches = 0;
  let missing = 0;
  for (let z = 0; z <= TILE_ARCHIVE_MAX_ZOOM; z += 1) {
    const next: typeof level = [];
    let counted = 0;
    for (const tile of level) {
      const stored = await archive.getZxy(tile.z, tile.x, tile.y);
      const served = await tileOf(app, tile.z, tile.x, tile.y, search);
      if (!stored?.data) {
        if (served.length > 0) missing += 1;
        continue;
      }
      const features = decode(new Uint8Array(stored.data));
      compared += 1;
      if (sortFeatures(features) !== sortFeatures(served)) mismatches += 1;
      counted += features.reduce((sum, feature) => sum + feature.count, 0);
      if (z < TILE_ARCHIVE_MAX_ZOOM)
        for (let i = 0; i < 4; i += 1)
          next.push({ z: z + 1, x: tile.x * 2 + (i % 2), y: tile.y * 2 + Math.floor(i / 2) });
    }
    t.equal(counted, located.length, `zoom ${z}: the counts add up to the located events`);
    level = next;
  }
  t.ok(compared > 30, `${compared} tiles compared`);
  t.equal(mismatches, 0, 'every tile has the features /api/v1/tiles gives');
  t.equal(missing, 0, 'no tile of /api/v1/tiles is missing from the archive');
  for (const event of located) {
    const cell = mercatorCell(event.location!.longitude, event.location!.latitude, TILE_ARCHIVE_MAX_ZOOM);
    const stored = await archive.getZxy(TILE_ARCHIVE_MAX_ZOOM, cell.x, cell.y);
    if (!stored) t.fail(`event ${event.id}: its zoom-12 tile is missing`);
  }
  t.ok(source.ranges > 1, 'read by ranges');
});

t.test(
  'a view past the tile cap is refused before its deep zooms; an empty one is an empty archive',
  async (t) => {
    const { app, db } = await testApp(t, {
      config: { quotasFile: policyFile(t, unlimitedAnonymousReads), exportArchiveMaxTiles: 20 },
    });
    await loadReadFixture(db.pool);
    const refused = await app.inject({
      method: 'GET',
      url: `/api/v1/events.pmtiles?${new URLSearchParams(VIEW)}`,
    });
    t.equal(refused.statusCode, 400);
    t.equal(refused.json().code, 'TILE_ARCHIVE_TOO_LARGE');
    t.match(refused.json().message, /more than 20 tiles for zooms 0 to 12/);
    const emptyUrl = '/api/v1/events.pmtiles?startDate=1990-01-01&endDate=1990-01-02';
    const empty = await app.inject({ method: 'GET', url: emptyUrl });
    t.equal(empty.statusCode, 200, 'an empty view: an archive, as every format gives an empty file');
    const emptyArchive = new PMTiles(new RouteSource(app, emptyUrl));
    const emptyHeader = await emptyArchive.getHeader();
    t.same(
      [emptyHeader.minZoom, emptyHeader.maxZoom, emptyHeader.numAddressedTiles],
      [0, 0, 1],
      'its zoom-0 tile alone',
    );
    const world = await emptyArchive.getZxy(0, 0, 0);
    t.same(decode(new Uint8Array(world?.data ?? new ArrayBuffer(0))), [], 'with no feature');
    const bad = await app.inject({ method: 'GET', url: '/api/v1/events.pmtiles?startDate=yesterday' });
    t.equal(bad.statusCode, 400, "a bad filter is the spec's 400");
  },
);

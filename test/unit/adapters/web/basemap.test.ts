import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import Fastify from 'fastify';
import { PbfReader } from 'pbf';
import { FetchSource, PMTiles } from 'pmtiles';
import t, { type Test } from 'tap';
import { basemapArchive } from '../../../../src/adapters/files/basemap-archive.ts';
import { writePmtiles } from '../../../../src/adapters/files/pmtiles-writer.ts';
import { projectRoot } from '../../../../src/adapters/config/environment.ts';
import { basemapRoutes, parseByteRange } from '../../../../src/adapters/web/basemap.ts';
import { exploreRoutes } from '../../../../src/adapters/web/explore.ts';

// The basemap's routes without a database: the archive answered in byte ranges (read back over
// HTTP by the pmtiles package's FetchSource, as the browser reads it), hostile Range headers, the
// style and the glyphs.

function archiveFile(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'basemap-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'test.pmtiles');
  const tiles = [0, 1, 2, 3].map((z) => ({ z, x: 0, y: 0, data: new Uint8Array(Buffer.from(`tile ${z}`)) }));
  writeFileSync(
    file,
    writePmtiles(tiles, { tileType: 'mvt', tileCompression: 'none', metadata: { name: 't' } }),
  );
  return file;
}

async function basemapApp(t: Test, file?: string) {
  const app = Fastify();
  await basemapRoutes(app, { archive: file ? basemapArchive(file) : undefined });
  t.teardown(() => app.close());
  return app;
}

t.test('Range headers: one range, open or suffix; past the end 416; the rest the whole file', async (t) => {
  t.same(parseByteRange(undefined, 100), undefined);
  t.same(parseByteRange('bytes=0-9', 100), { start: 0, end: 9 });
  t.same(parseByteRange('bytes=90-', 100), { start: 90, end: 99 });
  t.same(parseByteRange('bytes=-10', 100), { start: 90, end: 99 });
  t.same(parseByteRange('bytes=-1000', 100), { start: 0, end: 99 });
  t.same(parseByteRange('bytes=50-1000', 100), { start: 50, end: 99 });
  t.equal(parseByteRange('bytes=100-', 100), 'unsatisfiable');
  t.equal(parseByteRange('bytes=-0', 100), 'unsatisfiable');
  for (const ignored of [
    'bytes=0-1,5-6',
    'items=0-1',
    'bytes=5-1',
    'bytes=-',
    'bytes=1e3-',
    'bytes=0-99999999999999999',
  ]) {
    t.equal(parseByteRange(ignored, 100), undefined, ignored);
  }
});

t.test(
  'the archive: whole, in ranges, revalidated, and readable by the pmtiles reader over HTTP',
  async (t) => {
    const file = archiveFile(t);
    const app = await basemapApp(t, file);
    const whole = await app.inject({ url: '/basemap/basemap.pmtiles' });
    t.equal(whole.statusCode, 200);
    t.equal(whole.headers['accept-ranges'], 'bytes');
    t.equal(whole.headers['content-type'], 'application/vnd.pmtiles');
    t.match(whole.headers['cache-control'], /max-age=\d+/);
    const size = whole.rawPayload.length;
    const etag = String(whole.headers.etag);

    const head = await app.inject({ url: '/basemap/basemap.pmtiles', headers: { range: 'bytes=0-126' } });
    t.equal(head.statusCode, 206);
    t.equal(head.headers['content-range'], `bytes 0-126/${size}`);
    t.equal(head.rawPayload.toString('latin1', 0, 7), 'PMTiles');
    t.same(head.rawPayload, whole.rawPayload.subarray(0, 127));
    const tail = await app.inject({ url: '/basemap/basemap.pmtiles', headers: { range: 'bytes=-6' } });
    t.equal(tail.rawPayload.toString(), 'tile 3');

    const past = await app.inject({ url: '/basemap/basemap.pmtiles', headers: { range: `bytes=${size}-` } });
    t.equal(past.statusCode, 416);
    t.equal(past.headers['content-range'], `bytes */${size}`);
    const cached = await app.inject({ url: '/basemap/basemap.pmtiles', headers: { 'if-none-match': etag } });
    t.equal(cached.statusCode, 304);
    const changed = await app.inject({
      url: '/basemap/basemap.pmtiles',
      headers: { range: 'bytes=0-9', 'if-range': '"another"' },
    });
    t.equal(changed.statusCode, 200, 'If-Range naming another version: the whole file');
    const same = await app.inject({
      url: '/basemap/basemap.pmtiles',
      headers: { range: 'bytes=0-9', 'if-range': etag },
    });
    t.equal(same.statusCode, 206);

    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/basemap/basemap.pmtiles`;
    const reader = new PMTiles(new FetchSource(url));
    t.equal((await reader.getHeader()).maxZoom, 3);
    t.equal(Buffer.from((await reader.getZxy(2, 0, 0))!.data).toString(), 'tile 2');
  },
);

t.test('any Range header gets 200, 206 or 416, never a server error', async (t) => {
  const app = await basemapApp(t, archiveFile(t));
  const header = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc
      .tuple(fc.option(fc.nat({ max: 2 ** 53 })), fc.option(fc.nat({ max: 5000 })))
      .map(([a, b]) => `bytes=${a ?? ''}-${b ?? ''}`),
  );
  await fc.assert(
    fc.asyncProperty(header, async (range) => {
      const response = await app.inject({ url: '/basemap/basemap.pmtiles', headers: { range } });
      if (![200, 206, 416].includes(response.statusCode)) throw new Error(`${range}: ${response.statusCode}`);
      if (
        response.statusCode === 206 &&
        Number(response.headers['content-length']) !== response.rawPayload.length
      ) {
        throw new Error(`${range}: Content-Length ${response.headers['content-length']}`);
      }
    }),
    { seed: 29, numRuns: 300 },
  );
});

t.test('without an archive: the archive and the style are 404, the glyphs still served', async (t) => {
  const app = await basemapApp(t);
  t.equal((await app.inject({ url: '/basemap/basemap.pmtiles' })).statusCode, 404);
  t.equal((await app.inject({ url: '/basemap/style.json' })).statusCode, 404);
  t.equal((await app.inject({ url: '/basemap/glyphs/DejaVu%20Sans%20Book/0-255.pbf' })).statusCode, 200);
});

t.test('the style: the Protomaps layers on our archive and glyphs, no sprite, no icons', async (t) => {
  const app = await basemapApp(t, archiveFile(t));
  const style = (await app.inject({ url: '/basemap/style.json' })).json();
  t.equal(style.glyphs, '/basemap/glyphs/{fontstack}/{range}.pbf');
  t.equal(style.sources.protomaps.url, 'pmtiles:///basemap/basemap.pmtiles');
  t.equal(style.sprite, undefined);
  t.ok(style.layers.length > 50, `${style.layers.length} layers`);
  const text = JSON.stringify(style);
  t.notMatch(text, /icon-image/);
  t.notMatch(text, /Noto Sans (Regular|Medium)"/, 'every font is one the glyph route has');
  t.ok(
    style.layers.some((layer: { id: string }) => layer.id === 'places_locality'),
    'town names stay',
  );
});

type Glyph = { id: number; bitmap?: Uint8Array; width: number; height: number; advance: number };

t.test('glyphs: SDF bitmaps for a range of 256 code points; anything else 404', async (t) => {
  const app = await basemapApp(t);
  const response = await app.inject({ url: '/basemap/glyphs/Noto%20Sans%20Medium/0-255.pbf' });
  t.equal(response.statusCode, 200);
  t.equal(response.headers['content-type'], 'application/x-protobuf');
  const glyphs: Glyph[] = [];
  new PbfReader(response.rawPayload).readFields((tag, _, pbf) => {
    if (tag !== 1) return;
    pbf.readMessage((field, __, stack) => {
      if (field !== 3) return;
      glyphs.push(
        stack.readMessage(
          (key, glyph: Glyph, p) => {
            if (key === 1) glyph.id = p.readVarint();
            else if (key === 2) glyph.bitmap = p.readBytes();
            else if (key === 3) glyph.width = p.readVarint();
            else if (key === 4) glyph.height = p.readVarint();
            else if (key === 7) glyph.advance = p.readVarint();
          },
          { id: 0, width: 0, height: 0, advance: 0 },
        ),
      );
    }, null);
  }, null);
  const a = glyphs.find((glyph) => glyph.id === 65)!;
  t.ok(a.width > 10 && a.height > 14, `A is ${a.width}x${a.height}`);
  t.equal(a.bitmap?.length, (a.width + 6) * (a.height + 6), 'a 3 px border around the glyph');
  t.ok(Math.max(...a.bitmap!) > 192 && Math.min(...a.bitmap!) < 100, 'inside and outside the outline');
  t.equal(glyphs.find((glyph) => glyph.id === 32)?.width, 0, 'a space has an advance and no bitmap');
  for (const url of ['1-256.pbf', '0-255.png', '65536-65791.pbf', '0-511.pbf', '-0-255.pbf']) {
    t.equal((await app.inject({ url: `/basemap/glyphs/Any/${url}` })).statusCode, 404, url);
  }
  // Fastify refuses a parameter past 100 characters itself (414).
  t.equal((await app.inject({ url: `/basemap/glyphs/${'x'.repeat(300)}/0-255.pbf` })).statusCode, 414);
});

t.test('any font stack and range in the glyph URL gets an answer below 500', async (t) => {
  const app = await basemapApp(t);
  await fc.assert(
    fc.asyncProperty(fc.string({ maxLength: 60 }), fc.string({ maxLength: 20 }), async (fontstack, range) => {
      const url = `/basemap/glyphs/${encodeURIComponent(fontstack)}/${encodeURIComponent(range)}`;
      const response = await app.inject({ url });
      if (response.statusCode >= 500) throw new Error(`${url}: ${response.statusCode}`);
    }),
    { seed: 29, numRuns: 300 },
  );
});

t.test('the Explore page loads the pmtiles reader and the basemap style only with an archive', async (t) => {
  for (const archive of [archiveFile(t), undefined]) {
    const app = Fastify();
    t.teardown(() => app.close());
    await exploreRoutes(app, { root: projectRoot, version: '1', index: {}, basemapArchive: archive });
    const page = (await app.inject({ url: '/' })).body;
    const reader = /<script src="(\/assets\/pmtiles-[\d.]+\/pmtiles\.js)"><\/script>/.exec(page);
    if (archive) {
      t.ok(reader, 'the reader, as a classic script before the page module');
      t.match(page, /"basemap":"\/basemap\/style\.json"/);
      const script = await app.inject({ url: reader![1]!, headers: { 'accept-encoding': 'identity' } });
      t.match(script.body, /^"use strict";var pmtiles=/, "pmtiles' browser build");
    } else {
      t.notOk(reader, 'no reader without an archive');
      t.match(page, /"basemap":null/);
    }
  }
  const app = Fastify();
  t.teardown(() => app.close());
  await exploreRoutes(app, { root: projectRoot, version: '1', index: {} });
  const places = (
    await app.inject({ url: '/explore/places.geojson', headers: { 'accept-encoding': 'identity' } })
  ).json();
  const berlin = places.features.find(
    (f: { properties: { name: string } }) => f.properties.name === 'Berlin',
  );
  t.same(berlin?.properties.zoom, 3, 'Berlin (3.4 million) is named from zoom 3');
  t.ok(places.features.length > 15_000, `${places.features.length} towns of 15,000 or more`);
});

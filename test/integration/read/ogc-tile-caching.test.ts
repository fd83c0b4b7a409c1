import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { mercatorCell } from '../../../src/domain/read/clustering.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// Issue 35 §4: caching that works. OGC answers keep their ETag while the data holds (no per-request
// timeStamp in them) and revalidate to 304; the TileJSON's tile URLs carry the data version, a tile
// at the current version is immutable for a year, an empty (204) tile carries validators too, and
// a change in the data changes the URLs while an old URL answers a 302 to the current version.

const YEAR = 'public, max-age=31536000, immutable';

t.test('stable ETags, versioned tiles, 204 validators, bbox= refused', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  const fixture = await loadReadFixture(db.pool);
  const get = (url: string, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers });
  const fireId = fixture.events.find((event) => event.datasetSlug === 'fires')?.id;
  const ogcUrls = [
    '/ogc/collections',
    '/ogc/collections/fires',
    '/ogc/collections/fires/items?limit=5',
    '/ogc/collections/fires/items?limit=5&bbox=-180,-90,180,90',
    `/ogc/collections/fires/items/${fireId}`,
  ];
  const tags = new Map<string, string>();

  t.test('OGC answers: the same ETag twice, and a 304 for it', async (t) => {
    for (const url of ogcUrls) {
      const first = await get(url);
      t.equal(first.statusCode, 200, url);
      const tag = String(first.headers.etag);
      t.match(tag, /^"[\w-]+"$/, `${url}: a strong tag`);
      const second = await get(url);
      t.equal(second.headers.etag, tag, `${url}: the same tag on the next request`);
      t.equal(second.body, first.body, `${url}: the same bytes`);
      const revalidated = await get(url, { 'if-none-match': tag });
      t.equal(revalidated.statusCode, 304, `${url}: 304 for the tag`);
      t.equal(revalidated.rawPayload.length, 0);
      tags.set(url, tag);
    }
  });

  t.test('bbox= empty: 400 with the error body, not the whole collection', async (t) => {
    for (const query of ['bbox=', 'bbox=%20', 'limit=5&bbox=']) {
      const response = await get(`/ogc/collections/fires/items?${query}`);
      t.equal(response.statusCode, 400, query);
      t.match(response.json(), { error: 'Bad Request', message: /bbox is empty/ }, query);
    }
  });

  let tileUrl = '';
  let version = '';
  t.test('TileJSON: tile URLs carry the data version; those tiles are immutable', async (t) => {
    const tileJson = await get('/api/v1/tiles.json?catalog=news');
    t.equal(tileJson.statusCode, 200);
    const template = String(tileJson.json().tiles[0]);
    version = /[?&]v=([\d-]+)/.exec(template)?.[1] ?? '';
    t.match(version, /^\d+-\d+$/, 'the data version');
    tileUrl = template.replace(/^https?:\/\/[^/]+/, '').replace('{z}/{x}/{y}', '0/0/0');
    const tile = await get(tileUrl);
    t.equal(tile.statusCode, 200);
    t.equal(tile.headers['cache-control'], YEAR);
    const tag = String(tile.headers.etag);
    t.match(tag, /^"[\w-]+"$/);
    t.equal((await get(tileUrl, { 'if-none-match': tag })).statusCode, 304, 'revalidation still works');

    const atlantic = mercatorCell(-35, 10, 12);
    const emptyUrl = `/api/v1/tiles/12/${atlantic.x}/${atlantic.y}.mvt?v=${version}&catalog=news`;
    const empty = await get(emptyUrl);
    t.equal(empty.statusCode, 204, 'no event in the tile');
    t.equal(empty.headers['cache-control'], YEAR, 'an empty tile is kept as long');
    const emptyTag = String(empty.headers.etag);
    t.match(emptyTag, /^"[\w-]+"$/, 'and carries a validator');
    t.equal((await get(emptyUrl, { 'if-none-match': emptyTag })).statusCode, 304);

    const unversioned = await get(`/api/v1/tiles/12/${atlantic.x}/${atlantic.y}.mvt`);
    t.equal(unversioned.statusCode, 204);
    t.equal(
      unversioned.headers['cache-control'],
      'public, max-age=0, must-revalidate',
      'no version: revalidated',
    );
    t.match(String(unversioned.headers.etag), /^"[\w-]+"$/, 'a 204 without a version has a validator too');
  });

  t.test('a change in the data changes the URLs; an old URL is redirected, never stale', async (t) => {
    const before = await get(tileUrl);
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      select d.id, d.catalog_id, 'caching-new', 'a new fire', '{}'::jsonb,
             st_setsrid(st_makepoint(-35, 10), 4326), '2024-05-01T00:00:00Z'
      from datasets d where d.slug = 'fires'`);
    const tileJson = await get('/api/v1/tiles.json?catalog=news');
    const template = String(tileJson.json().tiles[0]);
    const current = /[?&]v=([\d-]+)/.exec(template)?.[1] ?? '';
    t.not(current, version, 'the TileJSON names a new version');

    const old = await get(tileUrl);
    t.equal(old.statusCode, 302, 'the old URL is not drawn again');
    t.equal(old.headers['cache-control'], 'no-cache', 'and its redirect is not kept');
    t.equal(old.headers.location, `/api/v1/tiles/0/0/0.mvt?v=${current}&catalog=news`);
    const moved = await get(String(old.headers.location));
    t.equal(moved.statusCode, 200);
    t.equal(moved.headers['cache-control'], YEAR);
    t.not(moved.headers.etag, before.headers.etag, 'a new tag');
    t.not(moved.body, before.body, 'the new tile holds the new event');

    const atlantic = mercatorCell(-35, 10, 12);
    const filled = await get(`/api/v1/tiles/12/${atlantic.x}/${atlantic.y}.mvt?v=${current}&catalog=news`);
    t.equal(
      filled.statusCode,
      200,
      'the tile that was empty at the old version holds the event at the new one',
    );
    t.equal((await get(`/api/v1/tiles/0/0/0.mvt?v=not-a-version`)).statusCode, 302, 'an unknown version too');

    for (const url of ['/ogc/collections/fires/items?limit=5']) {
      const after = await get(url, { 'if-none-match': tags.get(url) ?? '' });
      t.equal(after.statusCode, 200, `${url}: the old tag no longer holds`);
      t.not(after.headers.etag, tags.get(url));
    }
  });
});

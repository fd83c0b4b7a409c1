import Fastify from 'fastify';
import t, { type Test } from 'tap';
import { projectRoot } from '../../../../src/adapters/config/environment.ts';
import { exploreRoutes, unwrapRing } from '../../../../src/adapters/web/explore.ts';

// The Explore page's route without a database: what / answers, the tile setting reaching the page
// and its Content-Security-Policy, and the country outlines without bands across the world.

async function pageApp(t: Test, tile: { tileUrl?: string; tileAttribution?: string } = {}) {
  const app = Fastify();
  await exploreRoutes(app, { root: projectRoot, version: '9.9.9', index: { name: 'chronomap' }, ...tile });
  t.teardown(() => app.close());
  return app;
}

t.test('/ is HTML for browsers and the JSON index for JSON clients', async (t) => {
  const app = await pageApp(t);
  const html = await app.inject({
    url: '/',
    headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
  });
  t.equal(html.statusCode, 200);
  t.match(html.headers['content-type'], /text\/html/);
  t.match(html.body, /<script id="explore-settings" type="application\/json">\s*\{.*"tileUrl":null/);
  t.notMatch(html.headers['content-security-policy'], /unsafe-eval|unsafe-inline'; *script|https?:\/\//);
  const bare = await app.inject({ url: '/' });
  t.match(bare.headers['content-type'], /text\/html/, 'no Accept header: the page');
  const json = await app.inject({ url: '/', headers: { accept: 'application/json' } });
  t.same(json.json(), { name: 'chronomap' });
  t.match(json.headers.vary, /Accept/);
});

t.test('a tile URL reaches the page and its Content-Security-Policy', async (t) => {
  const app = await pageApp(t, {
    tileUrl: 'https://tiles.example.org/{z}/{x}/{y}.png',
    tileAttribution: '© Example </script><b>',
  });
  const html = await app.inject({ url: '/' });
  t.match(html.body, /"tileUrl":"https:\/\/tiles\.example\.org\/\{z\}\/\{x\}\/\{y\}\.png"/);
  t.notMatch(html.body, /<\/script><b>/, 'a value cannot close the settings script');
  t.match(
    html.headers['content-security-policy'],
    /img-src 'self' data: blob: https:\/\/tiles\.example\.org;/,
  );
});

t.test('unwrapRing makes a ring crossing the antimeridian continuous', async (t) => {
  t.same(
    unwrapRing([
      [179, 10],
      [-179, 10],
      [-179, 11],
      [179, 11],
      [179, 10],
    ]),
    [
      [179, 10],
      [181, 10],
      [181, 11],
      [179, 11],
      [179, 10],
    ],
  );
  t.same(
    unwrapRing([
      [10, 1],
      [20, 2],
    ]),
    [
      [10, 1],
      [20, 2],
    ],
    'other rings untouched',
  );
});

t.test('the country outlines have no jumps across the map', async (t) => {
  const app = await pageApp(t);
  const response = await app.inject({ url: '/explore/countries.geojson' });
  t.equal(response.statusCode, 200);
  const collection = response.json() as {
    features: Array<{ geometry: { type: string; coordinates: number[][][] | number[][][][] } }>;
  };
  let rings = 0;
  let jumps = 0;
  for (const { geometry } of collection.features) {
    const polygons = (
      geometry.type === 'Polygon' ? [geometry.coordinates] : geometry.coordinates
    ) as number[][][][];
    for (const ring of polygons.flat()) {
      rings += 1;
      ring.forEach(([lon = 0], i) => {
        if (i > 0 && Math.abs(lon - (ring[i - 1]?.[0] ?? lon)) > 180) jumps += 1;
      });
    }
  }
  t.ok(rings > 200, `${rings} rings`);
  t.equal(jumps, 0);
});

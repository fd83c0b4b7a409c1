import t from 'tap';
import { ingestApp, authHeaders } from '../../fixtures/ingest/client.ts';

// Every absolute link the service writes comes from PUBLIC_BASE_URL when it is set, whatever Host a
// request names (issue 28 §8): OGC API links, TileJSON tile URLs, a schedule's webhook URL and the
// scraper helper's install line. A Host header never becomes a link another client is served.
// Without PUBLIC_BASE_URL (development) the links name the Host the client reached, and those
// answers say `Vary: Host`, so a shared cache never serves one client's Host to another (issue 30 §7).

const BASE = 'https://events.example.org/chronomap';
const hostile = { host: 'attacker.example', 'x-forwarded-host': 'attacker.example' };

t.test('PUBLIC_BASE_URL is the origin of every absolute link, never the Host header', async (t) => {
  const { app, catalogId } = await ingestApp(t, {}, false, { publicBaseUrl: BASE });

  const landing = (await app.inject({ method: 'GET', url: '/ogc', headers: hostile })).json();
  const hrefs = (landing.links as Array<{ href: string }>).map((link) => link.href);
  t.ok(hrefs.length > 0);
  t.ok(
    hrefs.every((href) => href.startsWith(`${BASE}/`)),
    `OGC links: ${hrefs.join(' ')}`,
  );

  const tileJson = (await app.inject({ method: 'GET', url: '/api/v1/tiles.json', headers: hostile })).json();
  t.match(tileJson.tiles, [
    new RegExp(`^${BASE.replaceAll('.', '\\.')}/api/v1/tiles/\\{z\\}/\\{x\\}/\\{y\\}\\.mvt`),
  ]);

  const created = await app.inject({
    method: 'POST',
    url: '/api/scheduled-ingests',
    payload: { name: 'Feed', url: 'https://data.example.org/feed.csv', catalog: catalogId },
    headers: { ...authHeaders(app), ...hostile },
  });
  t.equal(created.statusCode, 201, created.body);
  t.match(
    created.json().webhookUrl,
    new RegExp(`^${BASE.replaceAll('.', '\\.')}/api/webhooks/trigger/[0-9a-f]{64}$`),
  );
  t.notMatch(created.body, /attacker/);
  for (const url of ['/ogc', '/api/v1/tiles.json']) {
    const answer = await app.inject({ method: 'GET', url, headers: hostile });
    t.notMatch(String(answer.headers.vary ?? ''), /host/i, `${url}: the same for every Host`);
  }
});

t.test(
  'without PUBLIC_BASE_URL, an answer with a link made from the Host header says Vary: Host',
  async (t) => {
    const { app } = await ingestApp(t);
    for (const url of ['/ogc', '/ogc/collections', '/api/v1/tiles.json']) {
      const answer = await app.inject({ method: 'GET', url, headers: hostile });
      t.equal(answer.statusCode, 200, url);
      t.match(answer.body, /http:\/\/attacker\.example\//, `${url}: links to the Host the client reached`);
      t.match(String(answer.headers['cache-control']), /public/, `${url}: a shared cache may keep it`);
      t.match(String(answer.headers.vary), /(^|, *)Host(,|$)/, `${url}: but only for that Host`);
      // The Vary the answer had before is kept.
      t.match(String(answer.headers.vary), /accept-encoding/i, `${url}: with the rest of its Vary`);
    }
    const garbage = await app.inject({
      method: 'GET',
      url: '/ogc',
      headers: { host: 'attacker.example/"><script>' },
    });
    t.notMatch(garbage.body, /attacker|<script/, 'a Host that is not a host name is never echoed');
    t.match(garbage.body, /http:\/\/localhost\/ogc/);
    const plain = await app.inject({ method: 'GET', url: '/api/v1/events?limit=1', headers: hostile });
    t.notMatch(
      String(plain.headers.vary ?? ''),
      /(^|, *)Host(,|$)/,
      'an answer without such a link does not vary by Host',
    );
  },
);

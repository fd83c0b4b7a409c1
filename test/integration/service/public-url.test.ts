import t from 'tap';
import { ingestApp, authHeaders } from '../../fixtures/ingest/client.ts';

// Every absolute link the service writes comes from PUBLIC_BASE_URL when it is set, whatever Host a
// request names (issue 28 §8): OGC API links, TileJSON tile URLs, a schedule's webhook URL and the
// scraper helper's install line. A Host header never becomes a link another client is served.

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
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp, insertAccessFixture } from '../../helpers/accounts.ts';
import type { TestDatabase } from '../../helpers/database.ts';

// The Atom and JSON feeds of saved views (issue 39 §2) through the whole service: newest-stored
// first (a back-dated import on top), paged by a cursor that neither skips nor repeats while events
// arrive, access exactly as the view's data, and every Atom page valid against RFC 4287's RELAX NG
// schema with Debian's `jing` (scripts/install-system-packages installs it).

const SCHEMA = path.resolve(import.meta.dirname, '../../fixtures/feeds/atom.rnc');

function validateAtom(t: Test, xml: string): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'atom-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'feed.xml');
  writeFileSync(file, xml);
  let output = '';
  try {
    execFileSync('jing', ['-c', SCHEMA, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? error);
  }
  t.equal(output, '', 'jing finds the Atom document valid against RFC 4287');
}

async function addEvent(db: TestDatabase, dataset: string, title: string, when: string): Promise<number> {
  return db.pool.oneFirst(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
    select d.id, d.catalog_id, ${`${dataset}-${title}`}, ${title}, '{"note": "a, b; c"}'::jsonb, ${when}::timestamptz
    from datasets d where d.slug = ${dataset} returning id`) as Promise<number>;
}

const ids = (xml: string) => [...xml.matchAll(/<id>tag:[^<]*events\/(\d+)<\/id>/g)].map((m) => Number(m[1]));
const nextLink = (xml: string) => /<link rel="next" href="([^"]+)"/.exec(xml)?.[1]?.replaceAll('&amp;', '&');

t.test('Atom: newest stored first, valid, paged by a stable cursor', async (t) => {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const owner = await createUser();
  await insertAccessFixture(db, owner.id);
  const session = as(await login(owner));
  const view = (
    await session('POST', '/api/views', {
      title: 'Open data & more',
      description: 'Everything <public>',
      state: { catalog: 'open', lng: 13, lat: 52, zoom: 8 },
      isPublic: true,
    })
  ).json();
  // Stored last, dated a century ago: a feed by the event's time would bury it; this one leads with it.
  const backDated = await addEvent(db, 'open-data', 'Back-dated', '1925-03-01T00:00:00Z');

  const first = await app.inject({ method: 'GET', url: `/v/${view.id}/feed.atom?limit=2` });
  t.equal(first.statusCode, 200);
  t.match(first.headers['content-type'], /^application\/atom\+xml/);
  validateAtom(t, first.body);
  t.equal(ids(first.body)[0], backDated, 'the newest stored event first, whatever its own time');
  t.match(first.body, /<title type="text">Open data &amp; more<\/title>/);

  // Walk the pages; an event stored mid-walk belongs on page one and must not disturb the walk.
  const seen: number[] = [];
  let url: string | undefined = `/v/${view.id}/feed.atom?limit=2`;
  let pages = 0;
  while (url) {
    const page = await app.inject({
      method: 'GET',
      url: new URL(url, 'http://x').pathname + new URL(url, 'http://x').search,
    });
    t.equal(page.statusCode, 200);
    validateAtom(t, page.body);
    seen.push(...ids(page.body));
    if (pages === 0) await addEvent(db, 'open-data', 'Arrived mid-walk', '2025-02-01T00:00:00Z');
    url = nextLink(page.body);
    pages += 1;
  }
  t.equal(seen.length, 6, 'the five public events and the back-dated one, none of the private dataset');
  t.equal(new Set(seen).size, seen.length, 'no event twice');
  t.same(
    seen,
    [...seen].sort((a, b) => b - a),
    'in stored order throughout',
  );

  const json = await app.inject({ method: 'GET', url: `/v/${view.id}/feed.json?limit=3` });
  t.equal(json.statusCode, 200);
  t.match(json.headers['content-type'], /^application\/feed\+json/);
  const feed = json.json();
  t.equal(feed.version, 'https://jsonfeed.org/version/1.1');
  t.equal(feed.items.length, 3);
  t.match(feed.items[0], { title: 'Arrived mid-walk', _chronomap: { event: { title: 'Arrived mid-walk' } } });
  t.ok(feed.next_url, 'a next page');
  const next = new URL(feed.next_url);
  const second = (await app.inject({ method: 'GET', url: next.pathname + next.search })).json();
  t.equal(second.items.length, 3);
  t.notOk(
    second.items.some((item: { id: string }) => feed.items.some((f: { id: string }) => f.id === item.id)),
  );

  const bad = await app.inject({ method: 'GET', url: `/v/${view.id}/feed.atom?cursor=nonsense!` });
  t.equal(bad.statusCode, 400, 'a forged cursor is a 400');
  t.equal((await app.inject({ method: 'GET', url: `/v/${view.id}/feed.json?limit=0` })).statusCode, 400);
  t.equal((await app.inject({ method: 'GET', url: `/v/${view.id}/feed.json?limit=9999` })).statusCode, 400);
});

t.test('a feed opens as its view and shows what the reader may see', async (t) => {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const owner = await createUser();
  await insertAccessFixture(db, owner.id);
  const session = as(await login(owner));
  const stranger = as(await login(await createUser()));
  const privateView = (
    await session('POST', '/api/views', { title: 'Mine', state: { catalog: 'mine' } })
  ).json();
  const url = `/v/${privateView.id}/feed.atom`;

  const anonymous = await app.inject({ method: 'GET', url });
  t.equal(anonymous.statusCode, 401, 'no credentials: asked for them');
  t.match(anonymous.json(), { error: String });
  t.equal((await stranger('GET', url)).statusCode, 404, 'not yours: no such view');
  t.equal((await app.inject({ method: 'GET', url: '/v/ZZZZZZZZZZ/feed.atom' })).statusCode, 401);
  const mine = await session('GET', url);
  t.equal(mine.statusCode, 200);
  t.equal(ids(mine.body).length, 5, "the owner's private catalog");

  const key = (await session('POST', '/api/api-keys', { name: 'feed reader', scope: 'read' })).json().secret;
  const withKey = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
  t.equal(withKey.statusCode, 200, 'a read-only key opens a private feed');
  t.same(ids(withKey.body), ids(mine.body));
  validateAtom(t, withKey.body);
  const strangerKey = (await stranger('POST', '/api/api-keys', { name: 'x', scope: 'read' })).json().secret;
  const theirs = await app.inject({
    method: 'GET',
    url,
    headers: { authorization: `Bearer ${strangerKey}` },
  });
  t.equal(theirs.statusCode, 404, "another user's key: no such view");
  const revoked = await app.inject({ method: 'GET', url, headers: { authorization: 'Bearer cmk_1_nope' } });
  t.equal(revoked.statusCode, 401);

  // A public view of a private catalog: anyone opens it, and sees none of the catalog's events.
  await session('PATCH', `/api/views/${privateView.id}`, { isPublic: true });
  const open = await app.inject({ method: 'GET', url });
  t.equal(open.statusCode, 200);
  t.same(ids(open.body), [], 'the view is public, its data is not');
  validateAtom(t, open.body);
  t.equal(open.headers['cache-control'], 'private, no-cache');
});

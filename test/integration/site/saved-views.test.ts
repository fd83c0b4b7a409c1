import t from 'tap';
import { accountsApp } from '../../helpers/accounts.ts';

// Saved views and their embeds through the HTTP API (issue 38 §1–2): who may do what, the short
// link, the embed's framing policy and hostile input.

const STATE = {
  lng: 139.6917,
  lat: 35.6895,
  zoom: 9,
  catalog: 'city-events',
  datasets: ['quakes'],
  startDate: '2024-01-01',
  endDate: '2024-06-30',
  mode: 'tiles',
};

t.test('saved views: create, read, change, delete, by the one access rule', async (t) => {
  const { createUser, login, as } = await accountsApp(t);
  const anonymous = as(null);
  const owner = as(await login(await createUser()));
  const stranger = as(await login(await createUser()));
  const admin = as(await login(await createUser({ role: 'admin' })));

  t.equal((await anonymous('POST', '/api/views', { title: 'x' })).statusCode, 401);
  const created = await owner('POST', '/api/views', { title: 'Tokyo, first half', state: STATE });
  t.equal(created.statusCode, 201, created.body);
  const view = created.json();
  t.match(view.id, /^[A-Za-z0-9]{10}$/);
  t.equal(view.isPublic, false, 'private unless asked');
  t.same(view.state, STATE);
  t.match(view.url, new RegExp(`/v/${view.id}$`));
  t.match(view.embedSnippet, new RegExp(`<iframe src="[^"]+/embed/${view.id}" title="Tokyo, first half"`));

  const path = `/api/views/${view.id}`;
  t.same(
    await Promise.all(
      [anonymous, stranger, owner, admin].map(async (who) => (await who('GET', path)).statusCode),
    ),
    [404, 404, 200, 200],
    'a private view: owner and admins; everyone else is told it does not exist',
  );
  t.equal((await stranger('GET', '/api/views/ZZZZZZZZZZ')).statusCode, 404, 'the same 404 as a missing one');
  t.same(
    (await stranger('GET', '/api/views')).json().docs,
    [],
    "a stranger's list holds only their own views",
  );
  t.equal((await owner('GET', '/api/views')).json().docs.length, 1);

  t.equal((await stranger('PATCH', path, { isPublic: true })).statusCode, 404);
  const published = await owner('PATCH', path, {
    isPublic: true,
    embedOrigins: ['https://news.example.org'],
  });
  t.equal(published.statusCode, 200);
  t.same(published.json().embedOrigins, ['https://news.example.org']);
  t.equal((await anonymous('GET', path)).statusCode, 200, 'public: anyone may open it');
  t.equal((await stranger('PATCH', path, { title: 'mine now' })).statusCode, 404, 'but not change it');
  t.equal((await stranger('DELETE', path)).statusCode, 404);
  t.equal((await admin('PATCH', path, { title: 'Moderated' })).json().title, 'Moderated');

  t.equal((await owner('DELETE', path)).statusCode, 200);
  t.equal((await owner('GET', path)).statusCode, 404, 'gone for its owner too');
  t.equal((await anonymous('GET', `/v/${view.id}`)).statusCode, 404, 'its link no longer opens');
});

t.test(
  'the short link opens the Explore page on the view; the embed is framable by its list only',
  async (t) => {
    const { createUser, login, as, app } = await accountsApp(t);
    const owner = as(await login(await createUser()));
    const view = (
      await owner('POST', '/api/views', { title: 'Shared <b>view</b>', state: STATE, isPublic: true })
    ).json();

    const link = await app.inject({ method: 'GET', url: `/v/${view.id}` });
    t.equal(link.statusCode, 302);
    const target = new URL(String(link.headers.location), 'http://x');
    t.equal(target.pathname, '/');
    t.same(Object.fromEntries(target.searchParams), {
      lng: '139.6917',
      lat: '35.6895',
      zoom: '9.0000',
      catalog: 'city-events',
      datasets: 'quakes',
      startDate: '2024-01-01',
      endDate: '2024-06-30',
      mode: 'tiles',
    });
    t.equal(link.headers['cache-control'], 'no-store', 'a view can change: never cached');

    const closed = await app.inject({ method: 'GET', url: `/embed/${view.id}` });
    t.equal(closed.statusCode, 200);
    t.match(
      String(closed.headers['content-security-policy']),
      /frame-ancestors 'none'/,
      'no list: no framing',
    );
    t.equal(closed.headers['x-frame-options'], 'DENY');
    t.match(closed.body, /<body class="embed">/);
    t.match(closed.body, /Shared &lt;b&gt;view&lt;\/b&gt;/, 'the title is text, not markup');
    t.notMatch(closed.body, /id="save-view"/, 'no page chrome');
    const settings = JSON.parse(
      /<script id="explore-settings" type="application\/json">([^<]*)</.exec(closed.body)?.[1] ?? '{}',
    );
    t.equal(settings.embed, true);
    t.match(settings.view, /^\?lng=139\.6917&lat=35\.6895&zoom=9\.0000&catalog=city-events/);

    await owner('PATCH', `/api/views/${view.id}`, {
      embedOrigins: ['https://news.example.org', 'http://localhost:8080'],
    });
    const open = await app.inject({ method: 'GET', url: `/embed/${view.id}` });
    t.match(
      String(open.headers['content-security-policy']),
      /frame-ancestors https:\/\/news\.example\.org http:\/\/localhost:8080;/,
    );
    t.equal(open.headers['x-frame-options'], undefined, 'the list decides, not X-Frame-Options');
    const home = await app.inject({ method: 'GET', url: '/' });
    t.match(
      String(home.headers['content-security-policy']),
      /frame-ancestors 'none'/,
      'the Explore page itself never frames',
    );
  },
);

t.test('hostile input: 400 with the field, never stored', async (t) => {
  const { createUser, login, as } = await accountsApp(t);
  const owner = as(await login(await createUser()));
  for (const body of [
    {},
    { title: '' },
    { title: 'x', state: { lng: 500 } },
    { title: 'x', state: { catalog: "a'; drop table events; --" } },
    { title: 'x', state: { startDate: 'yesterday' } },
    { title: 'x', embedOrigins: ["https://a.example 'unsafe-inline'"] },
    { title: 'x', embedOrigins: ['https://*.example.org'] },
    { title: 'x', extra: 1 },
    { title: 'x', state: { lng: 1, evil: true } },
  ]) {
    const response = await owner('POST', '/api/views', body);
    t.equal(response.statusCode, 400, JSON.stringify(body));
  }
  t.same((await owner('GET', '/api/views')).json().docs, [], 'nothing was stored');
  for (const code of ['short', '../../etc', 'x'.repeat(65), '%00']) {
    t.equal((await owner('GET', `/api/views/${code}`)).statusCode < 500, true, code);
    t.equal((await owner('GET', `/embed/${code}`)).statusCode < 500, true, code);
  }
});

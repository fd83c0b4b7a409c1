import t, { type Test } from 'tap';
import { authHeaders, ingestApp, signIn, upload } from '../../fixtures/ingest/client.ts';

// "My imports", the scheduled imports list and the wizard's catalogs: each caller sees only what
// they may manage (uploader or catalog owner; admins all), anonymous callers get 401, and the
// Payload-style where/sort/limit/page work as on the other collections.

const CSV = 'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,a\n';

async function setup(t: Test) {
  const app = await ingestApp(t, {}, false);
  const stranger = await signIn(app.app, app.db.pool);
  const admin = await signIn(app.app, app.db.pool, { role: 'admin' });
  const as = (token: string | null) => (token ? { authorization: `Bearer ${token}` } : {});
  const get = (url: string, token: string | null) =>
    app.app.inject({ method: 'GET', url, headers: as(token) });
  return { ...app, stranger, admin, as, get };
}

t.test(
  'GET /api/ingest-files lists the caller’s imports, newest first, filtered Payload-style',
  async (t) => {
    const { app, catalogId, user, stranger, admin, get } = await setup(t);
    for (const name of ['first.csv', 'second.csv', 'third.csv']) {
      const uploaded = await upload(app, catalogId, { name, content: CSV });
      t.equal(uploaded.statusCode, 201, uploaded.body);
    }
    t.equal((await get('/api/ingest-files', null)).statusCode, 401);

    const own = await get('/api/ingest-files', user.token);
    t.equal(own.statusCode, 200, own.body);
    const body = own.json();
    t.equal(body.totalDocs, 3);
    t.same(
      body.docs.map((d: { originalName: string }) => d.originalName),
      ['third.csv', 'second.csv', 'first.csv'],
    );
    t.equal(body.docs[0].jobs.length, 1, 'each file comes with its jobs');
    t.equal(body.docs[0].uploadedBy, user.id);

    const filtered = await get(
      '/api/ingest-files?where[originalName][equals]=second.csv&limit=1&sort=createdAt',
      user.token,
    );
    t.equal(filtered.statusCode, 200, filtered.body);
    t.same(
      filtered.json().docs.map((d: { originalName: string }) => d.originalName),
      ['second.csv'],
    );
    const paged = (await get('/api/ingest-files?limit=2&page=2&sort=id', user.token)).json();
    t.same([paged.page, paged.totalPages, paged.hasPrevPage, paged.docs.length], [2, 2, true, 1]);

    t.equal((await get('/api/ingest-files', stranger.token)).json().totalDocs, 0, 'a stranger sees none');
    t.equal((await get('/api/ingest-files', admin.token)).json().totalDocs, 3, 'an admin sees all');

    const unknown = await get('/api/ingest-files?where[storedPath][equals]=x', user.token);
    t.equal(unknown.statusCode, 400, 'internal columns cannot be filtered on');
    t.equal((await get('/api/ingest-files?sort=storedPath', user.token)).statusCode, 400);
    t.equal((await get('/api/ingest-files?where[__proto__][equals]=1', user.token)).statusCode, 400);
  },
);

t.test('GET /api/catalogs/with-datasets is the caller’s catalogs with their datasets', async (t) => {
  const { app, catalogId, user, stranger, admin, get } = await setup(t);
  const uploaded = await upload(app, catalogId, { name: 'events.csv', content: CSV });
  const datasetId = uploaded.json().doc.datasets[0] as number;

  t.equal((await get('/api/catalogs/with-datasets', null)).statusCode, 401);
  const own = await get('/api/catalogs/with-datasets', user.token);
  t.equal(own.statusCode, 200, own.body);
  const [catalog] = own.json().docs;
  t.equal(catalog.id, catalogId);
  t.same(
    catalog.datasets.map((d: { id: number }) => d.id),
    [datasetId],
  );
  t.equal(own.json().truncated, false);
  t.same((await get('/api/catalogs/with-datasets', stranger.token)).json().docs, [], 'not theirs');
  const all = (await get('/api/catalogs/with-datasets', admin.token)).json().docs;
  t.ok(
    all.some((c: { id: number }) => c.id === catalogId),
    'admins see every catalog',
  );
  t.equal((await get('/api/catalogs/with-datasets?x=1', user.token)).statusCode, 400);
});

t.test('scheduled imports: list, last runs, delete; others see none and get 404', async (t) => {
  const { app, catalogId, user, stranger, admin, get, as } = await setup(t);
  const created = await app.inject({
    method: 'POST',
    url: '/api/scheduled-ingests',
    payload: { name: 'Feed', url: 'https://example.org/feed.csv', schedule: '0 * * * *', catalog: catalogId },
    headers: authHeaders(app),
  });
  t.equal(created.statusCode, 201, created.body);
  const saved = created.json();
  t.match(
    saved.webhookUrl,
    /^http:\/\/localhost\/api\/webhooks\/trigger\/[0-9a-f]{64}$/,
    'the absolute webhook URL, shown once',
  );
  const id = saved.doc.id as number;
  t.notOk('webhookUrl' in (await get(`/api/scheduled-ingests/${id}`, user.token)).json(), 'never again');

  t.equal((await get('/api/scheduled-ingests', null)).statusCode, 401);
  const list = await get('/api/scheduled-ingests?where[enabled][equals]=true', user.token);
  t.equal(list.statusCode, 200, list.body);
  t.same(
    list.json().docs.map((d: { id: number }) => d.id),
    [id],
  );
  t.equal((await get('/api/scheduled-imports', user.token)).json().totalDocs, 1, 'the import-named alias');
  t.equal((await get('/api/scheduled-ingests', stranger.token)).json().totalDocs, 0);
  t.equal((await get('/api/scheduled-ingests', admin.token)).json().totalDocs, 1);

  const trigger = await app.inject({
    method: 'POST',
    url: `/api/scheduled-ingests/${id}/trigger`,
    headers: authHeaders(app),
  });
  t.equal(trigger.statusCode, 202, trigger.body);
  const runs = await get(`/api/scheduled-ingests/${id}/runs`, user.token);
  t.equal(runs.statusCode, 200, runs.body);
  t.match(runs.json().runs, [{ triggeredBy: 'manual', status: 'queued', finishedAt: null }]);
  t.equal((await get(`/api/scheduled-ingests/${id}/runs`, stranger.token)).statusCode, 404);

  const del = (token: string | null) =>
    app.inject({ method: 'DELETE', url: `/api/scheduled-ingests/${id}`, headers: as(token) });
  t.equal((await del(null)).statusCode, 401);
  t.equal((await del(stranger.token)).statusCode, 404, 'not theirs: as if it did not exist');
  t.equal((await get(`/api/scheduled-ingests/${id}`, user.token)).statusCode, 200, 'still there');
  t.equal((await del(user.token)).statusCode, 200);
  t.equal((await get(`/api/scheduled-ingests/${id}`, user.token)).statusCode, 404, 'gone');
  t.equal((await del(user.token)).statusCode, 404);
  const quotas = (await get('/api/quotas', user.token)).json();
  t.match(JSON.stringify(quotas), /activeSchedules/, 'the quota report still answers');
});

import t from 'tap';
import { safeNext } from '../../../src/adapters/pages/login-pages.ts';
import { ingestApp, signIn, upload, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';

// The import pages' answers to what a browser would not send: the login's return path only ever
// leads to a page of /account, ids that are not ids and records of someone else are the 404 page,
// over-long form fields are refused in words, and the webhook URL never travels in a redirect.

t.test('the login sends back only to a page of its own area', async (t) => {
  t.equal(safeNext('/account/imports/new', '/account/scrapers'), '/account/imports/new');
  for (const hostile of [
    '//evil.example/account/imports',
    '/\\evil.example',
    'https://evil.example/account/imports',
    'javascript:alert(1)',
    '/account/../dashboard',
    '/account/imports?x=1',
    '/dashboard/users',
    `/account/${'a'.repeat(120)}`,
    ['/account/imports'],
  ])
    t.equal(safeNext(hostile, '/account/scrapers'), null, `refused: ${String(hostile)}`);
});

/** The flash message a redirect carries. */
const flash = (answer: { headers: Record<string, unknown> }, kind: 'notice' | 'error') =>
  new URL(String(answer.headers.location), 'http://page').searchParams.get(kind);

t.test('the import pages refuse what a form would not send', async (t) => {
  const { app, db, catalogId, user } = await ingestApp(t);
  const csv = 'time,latitude,longitude\n2026-01-01T00:00:00Z,52.5,13.4\n';
  const doc = ((await upload(app, catalogId, { name: 'a.csv', content: csv })).json() as { doc: UploadedDoc })
    .doc;
  await waitForFile(app, doc.id);

  const anonymous = await app.inject({ method: 'GET', url: '/account/imports' });
  t.equal(anonymous.statusCode, 303);
  t.equal(anonymous.headers.location, '/account/login?next=%2Faccount%2Fimports', 'to the login, and back');
  const login = await app.inject({ method: 'GET', url: '/account/login?next=%2F%2Fevil.example' });
  t.notMatch(login.body, /name="next"/, 'a return path elsewhere is dropped');
  const back = await app.inject({ method: 'GET', url: '/account/login?next=%2Faccount%2Fimports' });
  t.match(back.body, /name="next" value="\/account\/imports"/);

  /** A session's page, its CSRF cookie and token, and a form post with them. */
  const session = async (token: string) => {
    const page = await app.inject({
      method: 'GET',
      url: '/account/imports',
      headers: { authorization: `Bearer ${token}` },
    });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const cookie = String(page.headers['set-cookie']).split(';')[0] ?? '';
    const post = (url: string, fields: Record<string, string> = {}) =>
      app.inject({
        method: 'POST',
        url,
        headers: {
          authorization: `Bearer ${token}`,
          cookie,
          'content-type': 'application/x-www-form-urlencoded',
        },
        payload: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
      });
    return { page, post };
  };

  const owner = await session(user.token);
  t.equal(owner.page.statusCode, 200);
  t.match(owner.page.body, /a\.csv/);
  for (const id of ['abc', '0', '99999999999999999999', '1e3', '-1']) {
    const answer = await owner.post(`/account/imports/jobs/${id}/retry`);
    t.equal(answer.statusCode, 404, `job id ${id}: the 404 page`);
  }
  const jobId = doc.jobs[0]?.id as number;
  const notFailed = await owner.post(`/account/imports/jobs/${jobId}/retry`);
  t.equal(notFailed.statusCode, 303);
  t.match(flash(notFailed, 'error'), /^Not retried: job \d+ has not failed/);
  const longStage = await owner.post(`/account/imports/jobs/${jobId}/reset`, { stage: 'x'.repeat(500) });
  t.match(flash(longStage, 'error'), /^stage must be at most 40 characters/);

  const stranger = await session((await signIn(app, db.pool, { role: 'user' })).token);
  t.notMatch(stranger.page.body, /a\.csv/, "someone else's imports are not listed");
  for (const action of ['retry', 'approve', 'reset', 'configure']) {
    const answer = await stranger.post(`/account/imports/jobs/${jobId}/${action}`, {
      stage: 'detect-schema',
    });
    t.equal(answer.statusCode, 404, `${action} on someone else's job: the 404 page`);
  }

  const created = await owner.post('/account/scheduled-imports', {
    name: 'Feed',
    url: 'https://example.org/feed.csv',
    target: `${catalogId}:new`,
  });
  t.equal(created.statusCode, 200, 'the webhook URL is answered on the page, not redirected');
  t.match(created.body, /\/api\/webhooks\/trigger\/[0-9a-f]{64}/);
  const scheduleId = Number(/data-schedule-id="(\d+)"/.exec(created.body)?.[1]);
  const tooLong = await owner.post('/account/scheduled-imports', {
    name: 'x'.repeat(300),
    url: 'https://example.org/feed.csv',
    target: `${catalogId}:new`,
  });
  t.match(flash(tooLong, 'error'), /^name must be at most 255 characters/);
  const blocked = await owner.post('/account/scheduled-imports', {
    name: 'Inside',
    url: 'file:///etc/passwd',
    target: `${catalogId}:new`,
  });
  t.match(flash(blocked, 'error'), /http/, 'a URL that is not http(s) is refused in words');
  for (const action of ['edit', 'enable', 'disable', 'trigger', 'delete']) {
    const answer = await stranger.post(`/account/scheduled-imports/${scheduleId}/${action}`, {
      name: 'Mine',
    });
    t.equal(answer.statusCode, 404, `${action} on someone else's schedule: the 404 page`);
  }
  const deleted = await owner.post(`/account/scheduled-imports/${scheduleId}/delete`);
  t.match(flash(deleted, 'notice'), /^Deleted Feed\./);
});

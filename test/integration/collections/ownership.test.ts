import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresIngestStore } from '../../../src/adapters/postgres/ingest/ingest-store.ts';
import { hmacTokenSigner } from '../../../src/adapters/security/hmac-token-signer.ts';
import { multipart } from '../../fixtures/ingest/client.ts';
import { PASSWORD, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { matrixFixture } from '../service/route-authorization-fixture.ts';

// The requests of issue 15, each as a test: what an anonymous caller and a stranger could read and
// do to an admin's private import, and to other people's catalogs and schedules, answers 401 / 404
// now, and changes nothing.

const CSV = 'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,a\n';
const Count = row(Type.Object({ n: Type.Number() }));
/** An error body with the id in its message replaced: "not yours" and "missing" differ in nothing else. */
const withoutIds = (body: { message?: string }) => ({ ...body, message: body.message?.replace(/\d+/g, 'N') });

t.test(
  'an admin import in a private catalog: anonymous 401, strangers the 404 of a missing one',
  async (t) => {
    const fx = await matrixFixture(t);
    const { app, db } = fx;
    const adminCatalog = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into catalogs (slug, title, is_public, created_by)
    values ('admin-private', 'Admin private', false, ${fx.users.admin.id}) returning id`);
    const upload = multipart({ catalog: String(adminCatalog) }, { name: 'secret.csv', content: CSV });
    const uploaded = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: upload.payload,
      headers: { ...upload.headers, authorization: `Bearer ${fx.tokens.admin}` },
    });
    t.equal(uploaded.statusCode, 201, uploaded.body);
    const file = uploaded.json().doc as { id: number; jobs: { id: number }[] };
    const job = file.jobs[0]?.id as number;
    const store = postgresIngestStore(db.pool);
    await store.markFailed(job, {
      lastError: 'the upstream service failed (503)',
      code: 'HTTP_503',
      failedStage: 'geocode-batch',
      classification: { type: 'recoverable', retryable: true, reason: 'the upstream service failed (503)' },
      failedAt: new Date().toISOString(),
    });
    // Its automatic attempts are used up: max_retries_exceeded.
    await db.pool.query(sql.unsafe`update ingest_jobs set retry_attempts = 3 where id = ${job}`);
    const before = await store.getJob(job);
    const queued = async () =>
      db.pool.oneFirst(
        sql.type(
          Count,
        )`select count(*)::int as n from pgboss.job where data->>'ingestJobId' = ${String(job)}`,
      );
    const queuedBefore = await queued();
    t.ok(queuedBefore >= 1, 'the upload queued the job: the count below can tell');

    const as = (token: string | null) => (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
      app.inject({
        method,
        url,
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
        ...(payload ? { payload } : {}),
      });
    const requests: [string, 'GET' | 'POST' | 'PATCH', string, object?][] = [
      ['the file', 'GET', `/api/ingest-files/${file.id}`],
      ['ingest progress', 'GET', `/api/ingest/${file.id}/progress`],
      ['import progress', 'GET', `/api/import/${file.id}/progress`],
      ['the job', 'GET', `/api/ingest-jobs/${job}`],
      ['the job (import-named)', 'GET', `/api/import-jobs/${job}`],
      ['a reset', 'POST', `/api/ingest-jobs/${job}/reset`, { stage: 'GEOCODE_BATCH' }],
      ['a new config', 'PATCH', `/api/ingest-jobs/${job}`, { config: { geocoding: true } }],
      ['a retry', 'POST', `/api/ingest-jobs/${job}/retry`],
      ['a retry (import-named)', 'POST', `/api/import-jobs/${job}/retry`],
    ];
    const anonymous = as(null);
    for (const [what, method, url, payload] of requests) {
      const response = await anonymous(method, url, payload);
      t.equal(response.statusCode, 401, `anonymous: ${what}`);
    }
    t.equal(
      (await anonymous('POST', '/api/ingest-jobs/999999999/retry')).statusCode,
      401,
      'before any lookup',
    );
    t.equal((await anonymous('GET', '/api/ingest-jobs/failed/recommendations')).statusCode, 401);

    const stranger = as(fx.tokens.stranger);
    for (const [what, method, url, payload] of requests) {
      const response = await stranger(method, url, payload);
      const missingUrl = url.replace(
        String(url.includes('ingest-files') || url.includes('progress') ? file.id : job),
        '999999999',
      );
      const missing = await stranger(method, missingUrl, payload);
      t.equal(response.statusCode, 404, `stranger: ${what}`);
      t.same(
        { ...response.json(), message: response.json().message.replace(/\d+/, 'N') },
        { ...missing.json(), message: missing.json().message.replace(/\d+/, 'N') },
        `stranger: ${what} answers like a missing one`,
      );
    }
    t.same(await store.getJob(job), before, 'no reset, no new config, no retry');
    t.equal(await queued(), queuedBefore, 'nothing was queued');

    const recommended = async (token: string) =>
      (
        (await as(token)('GET', '/api/ingest-jobs/failed/recommendations')).json() as {
          recommendations: { importJobId: number; stage: string }[];
        }
      ).recommendations.map((r) => r.importJobId);
    t.same(await recommended(fx.tokens.stranger), [], "strangers see no one else's failures");
    t.same(await recommended(fx.tokens.admin), [job], 'the admin (uploader) sees theirs');
    const imported = (await as(fx.tokens.admin)('GET', '/api/import-jobs/failed/recommendations')).json();
    t.match(imported.recommendations[0], {
      stage: 'GEOCODE_BATCH',
      recommendedAction: 'max_retries_exceeded',
    });
    const ingested = (await as(fx.tokens.admin)('GET', '/api/ingest-jobs/failed/recommendations')).json();
    t.match(ingested.recommendations[0], { stage: 'geocode-batch' });

    // A job waiting for its scheduled retry is listed too, with automatic_retry.
    const nextRetryAt = new Date(Date.now() + 3_600_000).toISOString();
    await db.pool.query(sql.unsafe`
    update ingest_jobs set stage = 'geocode-batch', failed_at = null, retry_attempts = 1, next_retry_at = ${nextRetryAt}
    where id = ${job}`);
    const waiting = (await as(fx.tokens.admin)('GET', '/api/ingest-jobs/failed/recommendations')).json();
    t.match(waiting.recommendations, [
      { importJobId: job, recommendedAction: 'automatic_retry', retryCount: 1 },
    ]);
    t.same(await recommended(fx.tokens.stranger), [], 'still nothing for strangers');
  },
);

t.test('uploads and schedules need write access to the catalog, like POST /api/datasets', async (t) => {
  const fx = await matrixFixture(t);
  const { app, db } = fx;
  const publicCatalog = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into catalogs (slug, title, is_public, created_by)
    values ('owner-public', 'Owner public', true, ${fx.users.owner.id}) returning id`);
  const datasets = () => db.pool.oneFirst(sql.type(Count)`select count(*)::int as n from datasets`);
  const before = await datasets();
  const uploadTo = async (catalog: number, token: string | null) => {
    const body = multipart({ catalog: String(catalog) }, { name: 'x.csv', content: CSV });
    return app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      payload: body.payload,
      headers: { ...body.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    });
  };
  const stranger = fx.tokens.stranger;
  const intoPrivate = await uploadTo(fx.catalog, stranger);
  t.equal(intoPrivate.statusCode, 404, 'a catalog the caller cannot see: as if it did not exist');
  t.same(
    withoutIds(intoPrivate.json()),
    withoutIds((await uploadTo(987654321, stranger)).json()),
    'the same body as a missing catalog',
  );
  const intoPublic = await uploadTo(publicCatalog, stranger);
  t.equal(intoPublic.statusCode, 403, "another user's public catalog: forbidden");
  const dataset = await app.inject({
    method: 'POST',
    url: '/api/datasets',
    payload: { slug: 'theirs', title: 'Theirs', catalog: publicCatalog },
    headers: { authorization: `Bearer ${stranger}` },
  });
  t.equal(dataset.statusCode, 403, 'POST /api/datasets answers the same');
  t.equal(await datasets(), before, 'no dataset was created in either catalog');

  const schedule = (catalog: number, token: string | null) =>
    app.inject({
      method: 'POST',
      url: '/api/scheduled-ingests',
      payload: { name: 'Feed', url: 'https://example.org/feed.csv', schedule: '0 * * * *', catalog },
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });
  t.equal((await schedule(fx.catalog, null)).statusCode, 401, 'anonymous');
  t.equal((await schedule(fx.catalog, stranger)).statusCode, 404, 'into a catalog they cannot see');
  t.equal((await schedule(publicCatalog, stranger)).statusCode, 403, "into another user's public catalog");

  const theirs = `/api/scheduled-ingests/${fx.schedule}`;
  for (const [method, url, payload] of [
    ['GET', theirs, undefined],
    ['PATCH', theirs, { enabled: false }],
    ['POST', `${theirs}/trigger`, undefined],
  ] as const) {
    for (const [token, status] of [
      [null, 401],
      [stranger, 404],
    ] as const) {
      const response = await app.inject({
        method,
        url,
        ...(payload ? { payload } : {}),
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
      });
      t.equal(response.statusCode, status, `${method} ${url} as ${token ? 'a stranger' : 'anonymous'}`);
    }
  }
  const runs = await db.pool.oneFirst(sql.type(Count)`select count(*)::int as n from scheduled_ingest_runs`);
  t.equal(runs, 0, 'no run was triggered');
  const stored = await db.pool.oneFirst(
    sql.type(
      row(Type.Object({ enabled: Type.Boolean() })),
    )`select enabled from scheduled_ingests where id = ${fx.schedule}`,
  );
  t.equal(stored, true, 'still enabled');
});

t.test('bad ids and bad tokens: 404 for absent, 400 for malformed, 401 for every bad token', async (t) => {
  const fx = await matrixFixture(t);
  const { app } = fx;
  const get = (url: string, token: string | null = fx.tokens.stranger) =>
    app.inject({ method: 'GET', url, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
  for (const base of [
    '/api/ingest-jobs',
    '/api/import-jobs',
    '/api/ingest-files',
    '/api/scheduled-ingests',
  ]) {
    t.equal((await get(`${base}/999999999`)).statusCode, 404, `${base}: absent`);
    t.equal((await get(`${base}/2147483647`)).statusCode, 404, `${base}: the largest id PostgreSQL stores`);
    // Past PostgreSQL's integer range an id cannot name anything: malformed, like the others.
    for (const malformed of [
      '-1',
      '0',
      'abc',
      '1.5',
      '2147483648',
      '9007199254740991',
      '99999999999999999999999',
    ]) {
      t.equal(
        (await get(`${base}/${malformed}`)).statusCode,
        400,
        `${base}/${malformed}: malformed (spec: 400)`,
      );
      t.equal(
        (await get(`${base}/${malformed}`, null)).statusCode,
        401,
        `${base}/${malformed}: anonymous first`,
      );
    }
  }

  for (const url of ['/api/scrapers/abc/run', '/api/scraper-repos/-1/sync']) {
    const anonymous = await app.inject({ method: 'POST', url });
    t.equal(anonymous.statusCode, 401, `${url}: anonymous callers learn nothing from a malformed id`);
    const stranger = await app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${fx.tokens.stranger}` },
    });
    t.equal(stranger.statusCode, 400, `${url}: malformed (spec: 400)`);
  }

  const signer = hmacTokenSigner(TEST_SESSION_SECRET);
  const now = Math.floor(Date.now() / 1000);
  const expired = signer.sign({
    sub: fx.users.owner.id,
    sid: '00000000-0000-0000-0000-000000000000',
    iat: now - 7200,
    exp: now - 3600,
  });
  const forged = hmacTokenSigner('another secret that is long enough 0123456789').sign({
    sub: fx.users.admin.id,
    sid: '00000000-0000-0000-0000-000000000000',
    iat: now,
    exp: now + 3600,
  });
  const revoked = await fx.login(fx.users.owner.email);
  await app.inject({
    method: 'POST',
    url: '/api/users/logout',
    headers: { authorization: `Bearer ${revoked}` },
  });
  const deletedUser = await fx.freshUser();
  const deletion = await app.inject({
    method: 'POST',
    url: '/api/users/delete-account',
    payload: { password: PASSWORD },
    headers: { authorization: `Bearer ${deletedUser.token}` },
  });
  t.equal(deletion.statusCode, 200, deletion.body);
  for (const [what, token, code] of [
    ['expired', expired, 'TOKEN_EXPIRED'],
    ['forged', forged, 'TOKEN_INVALID'],
    ['revoked', revoked, 'TOKEN_REVOKED'],
    ['of a deleted user', deletedUser.token, 'TOKEN_REVOKED'],
    ['garbage', 'not.a.token', 'TOKEN_INVALID'],
  ] as const) {
    for (const url of [
      `/api/ingest-jobs/${fx.job}`,
      `/api/scheduled-ingests/${fx.schedule}`,
      '/api/ingest-jobs/failed/recommendations',
    ]) {
      const response = await get(url, token);
      t.equal(response.statusCode, 401, `${what} token: ${url}`);
      t.equal(response.json().code, code, `${what} token says why`);
    }
  }
});

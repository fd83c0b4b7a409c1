import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { hmacTokenSigner } from '../../../src/adapters/security/hmac-token-signer.ts';
import { accountsApp, insertAccessFixture, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';

// Each cause of a 500 or of a polluted Object.prototype that the red-team pass found (issue 16)
// answers 400/401 with the error body now, and the service keeps working afterwards.

t.test('hostile input', async (t) => {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const admin = await createUser({ role: 'admin' });
  const token = await login(admin);
  await insertAccessFixture(db, admin.id);

  t.test(
    'where[__proto__] is a 400 naming the key; Object.prototype and /api/health are untouched',
    async (t) => {
      const response = await app.inject({
        method: 'GET',
        url: '/api/catalogs?where[__proto__][polluted]=yes',
      });
      t.equal(response.statusCode, 400);
      t.equal(response.json().code, 'FORBIDDEN_KEY');
      t.match(response.json().message, /"__proto__"/);
      for (const url of [
        '/api/catalogs?where[constructor][x]=1',
        '/api/events?where[or][0][prototype][equals]=1',
      ]) {
        t.equal((await app.inject({ method: 'GET', url })).statusCode, 400, url);
      }
      t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
      t.equal((await app.inject({ method: 'GET', url: '/api/health' })).statusCode, 200);
      t.ok(await login(admin), 'login still works');
    },
  );

  t.test('a JSON body with a prototype key is a 400 naming it', async (t) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/catalogs',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: '{"slug":"x","title":"x","__proto__":{"polluted":"yes"}}',
    });
    t.equal(response.statusCode, 400);
    t.match(response.json().message, /"__proto__" is not allowed/);
    t.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  t.test('numbers are parsed strictly: 400, never 500', async (t) => {
    const urls = [
      '/api/catalogs/Infinity',
      '/api/catalogs/-Infinity',
      '/api/catalogs/1e400',
      '/api/catalogs/+1',
      '/api/catalogs/2147483648',
      '/api/events/99999999999999999999',
      '/api/datasets/0x10',
      '/api/catalogs?limit=Infinity',
      '/api/catalogs?limit=-Infinity',
      '/api/catalogs?page=1e16',
      '/api/events?page=99999999999',
      '/api/v1/events?limit=1e400',
      '/api/v1/events?page=Infinity',
    ];
    for (const url of urls) {
      const response = await as(token)('GET', url);
      t.equal(response.statusCode, 400, url);
      t.equal(response.json().error, 'Bad Request', url);
    }
    t.equal((await as(token)('GET', '/api/catalogs/2147483647')).statusCode, 404, 'the largest id is a 404');
  });

  t.test('year 0000 is outside the supported range: 400', async (t) => {
    const read = await app.inject({ method: 'GET', url: '/api/v1/events?startDate=0000-01-01' });
    t.equal(read.statusCode, 400);
    t.match(read.json().message, /supported years 0001 to 9999/);
    const datasets = await as(token)('GET', '/api/datasets?limit=1');
    const dataset = datasets.json().docs[0].id as number;
    const created = await as(token)('POST', '/api/events', {
      dataset,
      uniqueId: 'year-zero',
      eventTimestamp: '0000-01-01T00:00:00Z',
    });
    t.equal(created.statusCode, 400);
    const where = await as(token)('GET', '/api/events?where[eventTimestamp][less_than]=0000-06-01');
    t.equal(where.statusCode, 400);
  });

  t.test('NUL characters in JSON strings are a 400, and later requests are unharmed', async (t) => {
    const loginNul = await app.inject({
      method: 'POST',
      url: '/api/users/login',
      payload: { email: 'a\u0000b@x.y', password: 'x' },
    });
    t.equal(loginNul.statusCode, 400);
    t.equal(loginNul.json().code, 'NUL_CHARACTER');
    const register = await app.inject({
      method: 'POST',
      url: '/api/users/register',
      payload: { email: 'nul@example.org', password: 'pass\u0000word-long-enough' },
    });
    t.equal(register.statusCode, 400);
    const title = await as(token)('POST', '/api/catalogs', { slug: 'nul', title: 'a\u0000b' });
    t.equal(title.statusCode, 400);
    const query = await app.inject({ method: 'GET', url: '/api/v1/events?search=a%00b' });
    t.equal(query.statusCode, 400);
    t.equal((await as(token)('GET', '/api/catalogs')).statusCode, 200, 'the next request works');
    t.ok(await login(admin), 'and so does the next login');
  });

  t.test('a signed token whose session id is not a UUID is a 401', async (t) => {
    const now = Math.floor(Date.now() / 1000);
    const forged = hmacTokenSigner(TEST_SESSION_SECRET).sign({
      sub: admin.id,
      sid: '1',
      iat: now,
      exp: now + 600,
    });
    const me = await as(forged)('GET', '/api/users/me');
    t.equal(me.statusCode, 200);
    t.equal(me.json().user, null, 'not logged in');
    const write = await as(forged)('POST', '/api/catalogs', { slug: 'forged', title: 'Forged' });
    t.equal(write.statusCode, 401);
  });

  t.test('uploads: a multipart body without its closing boundary, and catalog=1e308, are 400', async (t) => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'multipart/form-data; boundary=XX' };
    const truncated = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      headers,
      payload:
        '--XX\r\nContent-Disposition: form-data; name="catalog"\r\n\r\n1\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\ntitle\nx\n',
    });
    t.equal(truncated.statusCode, 400, truncated.body);
    const huge = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      headers,
      payload:
        '--XX\r\nContent-Disposition: form-data; name="catalog"\r\n\r\n1e308\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\ntitle\nx\n\r\n--XX--\r\n',
    });
    t.equal(huge.statusCode, 400, huge.body);
    t.match(huge.json().message, /catalog/);
    const proto = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      headers,
      payload: '--XX\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\n1\r\n--XX--\r\n',
    });
    t.equal(proto.statusCode, 400, proto.body);
    t.match(proto.json().message, /__proto__|prototype/);
    for (const name of ['constructor', 'prototype']) {
      const field = await app.inject({
        method: 'POST',
        url: '/api/ingest-files',
        headers,
        payload: `--XX\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n1\r\n--XX--\r\n`,
      });
      t.equal(field.statusCode, 400, field.body);
      t.match(field.json().message, /not allowed/);
    }
    const settings = await app.inject({
      method: 'POST',
      url: '/api/ingest-files',
      headers,
      payload:
        '--XX\r\nContent-Disposition: form-data; name="catalog"\r\n\r\n1\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="settings"\r\n\r\n{"fieldMapping":{"__proto__":{"x":1}}}\r\n' +
        '--XX\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\ntitle\nx\n\r\n--XX--\r\n',
    });
    t.equal(settings.statusCode, 400, settings.body);
    t.match(settings.json().message, /settings: the JSON key "__proto__" is not allowed/);
    t.equal(({} as Record<string, unknown>).x, undefined);
  });

  t.test('fifty contains conditions are refused at once: 400', async (t) => {
    const query = Array.from({ length: 50 }, (_, i) => `where[or][${i}][title][contains]=abc${i}`).join('&');
    const response = await app.inject({ method: 'GET', url: `/api/events?${query}` });
    t.equal(response.statusCode, 400);
    t.equal(response.json().code, 'INVALID_WHERE');
  });

  t.test('/api/v1/events/geo with world bounds at zoom 12 is capped, and says so', async (t) => {
    const bounds = encodeURIComponent(JSON.stringify({ north: 90, south: -90, east: 180, west: -180 }));
    const world = await app.inject({ method: 'GET', url: `/api/v1/events/geo?zoom=12&bounds=${bounds}` });
    t.equal(world.statusCode, 200);
    t.equal(world.json().capped, true);
    const total = world
      .json()
      .features.reduce(
        (sum: number, f: { properties: { count?: number } }) => sum + (f.properties.count ?? 1),
        0,
      );
    t.equal(total, 5, 'every visible event still counted');
    const city = encodeURIComponent(JSON.stringify({ north: 52.6, south: 52.4, east: 13.6, west: 13.2 }));
    const view = await app.inject({ method: 'GET', url: `/api/v1/events/geo?zoom=12&bounds=${city}` });
    t.equal(view.json().capped, false);
  });

  t.test('a collection page over its byte bound is a 400 naming a limit that fits', async (t) => {
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      select dataset_id, catalog_id, 'huge-' || n, 'huge', jsonb_build_object('text', repeat('x', 3 * 1024 * 1024)),
             location, event_timestamp
      from events cross join generate_series(1, 3) n where unique_id = 'open-data-1'`);
    const page = await as(token)('GET', '/api/events?limit=10&where[title][equals]=huge');
    t.equal(page.statusCode, 400);
    t.equal(page.json().code, 'PAGE_TOO_LARGE');
    t.match(page.json().message, /limit=\d+ or fewer/);
    const smaller = await as(token)('GET', '/api/events?limit=2&where[title][equals]=huge');
    t.equal(smaller.statusCode, 200);
    t.equal(smaller.json().docs.length, 2);
  });
});

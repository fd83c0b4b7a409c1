import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp } from '../../helpers/accounts.ts';

t.test('collections API in Payload conventions', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t);
  const owner = await createUser();
  const ownerApi = as(await login(owner));

  const created = await ownerApi('POST', '/api/catalogs', {
    slug: 'rivers',
    title: 'Rivers',
    isPublic: true,
  });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), {
    message: 'Catalog successfully created.',
    doc: {
      id: Number,
      slug: 'rivers',
      title: 'Rivers',
      isPublic: true,
      createdBy: owner.id,
      description: null,
    },
  });
  t.match(created.json().doc.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const catalogId = created.json().doc.id as number;
  for (const [slug, title, isPublic] of [
    ['alpha', 'Alpha floods', true],
    ['beta', 'Beta droughts', false],
    ['gamma', 'Gamma floods and storms', true],
  ] as const) {
    const response = await ownerApi('POST', '/api/datasets', { catalog: catalogId, slug, title, isPublic });
    t.equal(response.statusCode, 201, response.body);
  }
  const datasetId = (await ownerApi('GET', '/api/datasets?where[slug][equals]=alpha')).json().docs[0].id;

  t.test('list body and paging', async (t) => {
    const page1 = await ownerApi('GET', '/api/datasets?limit=2&sort=slug');
    t.equal(page1.statusCode, 200);
    t.same(
      page1.json().docs.map((d: { slug: string }) => d.slug),
      ['alpha', 'beta'],
    );
    t.match(page1.json(), {
      totalDocs: 3,
      limit: 2,
      page: 1,
      totalPages: 2,
      hasNextPage: true,
      hasPrevPage: false,
      nextPage: 2,
      prevPage: null,
      pagingCounter: 1,
    });
    const page2 = await ownerApi('GET', '/api/datasets?limit=2&page=2&sort=slug');
    t.same(
      page2.json().docs.map((d: { slug: string }) => d.slug),
      ['gamma'],
    );
    t.match(page2.json(), {
      page: 2,
      hasNextPage: false,
      hasPrevPage: true,
      nextPage: null,
      prevPage: 1,
      pagingCounter: 3,
    });
    const desc = await ownerApi('GET', '/api/datasets?sort=-slug');
    t.same(
      desc.json().docs.map((d: { slug: string }) => d.slug),
      ['gamma', 'beta', 'alpha'],
    );
    t.equal(desc.json().limit, 10, "Payload's default page size");
  });

  t.test('where operators', async (t) => {
    const slugs = async (query: string) => {
      const response = await ownerApi('GET', `/api/datasets?sort=slug&${query}`);
      t.equal(response.statusCode, 200, `${query}: ${response.body}`);
      return response.json().docs.map((d: { slug: string }) => d.slug);
    };
    t.same(await slugs('where[slug][equals]=beta'), ['beta']);
    t.same(await slugs('where[slug][not_equals]=beta'), ['alpha', 'gamma']);
    t.same(await slugs('where[slug][in]=alpha,gamma'), ['alpha', 'gamma']);
    t.same(await slugs('where[slug][in][0]=alpha&where[slug][in][1]=beta'), ['alpha', 'beta']);
    t.same(await slugs('where[slug][not_in]=alpha,gamma'), ['beta']);
    t.same(await slugs('where[isPublic][equals]=false'), ['beta']);
    t.same(await slugs(`where[id][greater_than]=${datasetId}`), ['beta', 'gamma']);
    t.same(await slugs(`where[id][greater_than_equal]=${datasetId}`), ['alpha', 'beta', 'gamma']);
    t.same(await slugs(`where[id][less_than]=${datasetId + 1}`), ['alpha']);
    t.same(await slugs(`where[id][less_than_equal]=${datasetId + 1}`), ['alpha', 'beta']);
    t.same(await slugs('where[title][contains]=FLOOD'), ['alpha', 'gamma']);
    t.same(await slugs('where[title][like]=storms%20gamma'), ['gamma'], 'like: every word, any order');
    t.same(await slugs('where[title][contains]=%25'), [], 'a % in the value is a literal');
    t.same(await slugs('where[description][exists]=false'), ['alpha', 'beta', 'gamma']);
    t.same(await slugs('where[description][exists]=true'), []);
    t.same(await slugs('where[createdAt][greater_than]=2000-01-01T00:00:00Z'), ['alpha', 'beta', 'gamma']);
    t.same(
      await slugs(
        'where[or][0][slug][equals]=alpha&where[or][1][and][0][isPublic][equals]=true&where[or][1][and][1][title][contains]=storm',
      ),
      ['alpha', 'gamma'],
    );
    t.same(
      await slugs('where[slug][in]=alpha,beta&where[isPublic][equals]=true'),
      ['alpha'],
      'top-level conditions are and-ed',
    );
  });

  t.test('a dataset declares its custom date fields through the API (issue 28 §8)', async (t) => {
    const gamma = (await ownerApi('GET', '/api/datasets?where[slug][equals]=gamma')).json().docs[0];
    t.same(gamma.dateFields, [], 'none declared yet');
    await db.pool.query(
      sql.unsafe`update datasets set schema_settings = '{"kept": 1}' where id = ${gamma.id}`,
    );
    const declared = await ownerApi('PATCH', `/api/datasets/${gamma.id}`, {
      dateFields: ['data.startDate', 'startDate', 'period.ends'],
    });
    t.equal(declared.statusCode, 200, declared.body);
    t.same(declared.json().doc.dateFields, ['startDate', 'period.ends'], 'one form, no duplicates');
    const settings = await db.pool.one(
      sql.type(
        row(Type.Object({ s: Type.Unknown() })),
      )`select schema_settings as s from datasets where id = ${gamma.id}`,
    );
    t.same(settings.s, { kept: 1, dateFields: ['startDate', 'period.ends'] }, 'other settings are kept');

    // Written directly: the owner's event quota belongs to the next test.
    await db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, event_timestamp, data)
      values (${gamma.id}, ${catalogId}, 'storm-1', '2024-05-01T12:00:00Z', '{"startDate": "2020-06-01T00:00:00Z"}')`);
    const sources = await ownerApi('GET', '/api/v1/data-sources');
    const listed = sources
      .json()
      .catalogs.flatMap((c: { datasets: { slug: string }[] }) => c.datasets)
      .find((d: { slug: string }) => d.slug === 'gamma');
    t.same(listed?.dateFields, ['startDate', 'period.ends'], 'the read API offers them');
    const filtered = await ownerApi(
      'GET',
      '/api/v1/events?datasets=gamma&dateField=data.startDate&startDate=2020-01-01&endDate=2020-12-31',
    );
    t.equal(filtered.json().pagination.totalDocs, 1, 'and filters on them');

    for (const dateFields of [
      ['not a name!'],
      ['data.'],
      Array.from({ length: 21 }, (_, i) => `f${i}`),
      [['startDate', 'endDate']],
      [{}],
    ]) {
      const refused = await ownerApi('PATCH', `/api/datasets/${gamma.id}`, { dateFields });
      t.equal(refused.statusCode, 400, JSON.stringify(dateFields));
    }
    t.same(
      (await ownerApi('GET', `/api/datasets/${gamma.id}`)).json().dateFields,
      ['startDate', 'period.ends'],
      'a refused change changes nothing',
    );
    const cleared = await ownerApi('PATCH', `/api/datasets/${gamma.id}`, { dateFields: [] });
    t.same(cleared.json().doc.dateFields, []);
    await db.pool.query(sql.unsafe`delete from events where unique_id = 'storm-1'`);
  });

  t.test('read, update, delete one document', async (t) => {
    const one = await ownerApi('GET', `/api/datasets/${datasetId}`);
    t.equal(one.statusCode, 200);
    t.equal(one.json().slug, 'alpha');
    const updated = await ownerApi('PATCH', `/api/datasets/${datasetId}`, {
      title: 'Alpha floods (revised)',
      isPublic: false,
    });
    t.equal(updated.statusCode, 200, updated.body);
    t.match(updated.json(), {
      message: 'Updated successfully.',
      doc: { title: 'Alpha floods (revised)', isPublic: false },
    });
    const moved = await ownerApi('PATCH', `/api/datasets/${datasetId}`, { catalog: catalogId });
    t.equal(moved.statusCode, 400, 'a dataset does not move between catalogs');
    const duplicate = await ownerApi('POST', '/api/datasets', {
      catalog: catalogId,
      slug: 'beta',
      title: 'Again',
    });
    t.equal(duplicate.statusCode, 409);
    const badSlug = await ownerApi('POST', '/api/catalogs', { slug: 'Not A Slug', title: 'x' });
    t.equal(badSlug.statusCode, 400);

    const event = await ownerApi('POST', '/api/events', {
      dataset: datasetId,
      uniqueId: 'e-1',
      title: 'Flood',
      data: { depth: 2 },
      location: { longitude: 13.4, latitude: 52.5 },
      eventTimestamp: '2024-05-01T12:00:00Z',
    });
    t.equal(event.statusCode, 201, event.body);
    t.match(event.json().doc, {
      dataset: datasetId,
      catalog: catalogId,
      uniqueId: 'e-1',
      data: { depth: 2 },
      location: { longitude: 13.4, latitude: 52.5 },
      eventTimestamp: '2024-05-01T12:00:00.000Z',
      isValid: true,
    });
    const again = await ownerApi('POST', '/api/events', {
      dataset: datasetId,
      uniqueId: 'e-1',
      eventTimestamp: '2024-05-02T12:00:00Z',
    });
    t.equal(again.statusCode, 409, 'a uniqueId is stored once per dataset');
    const bulky = { notes: 'n'.repeat(300 * 1024) };
    const tooLarge = await ownerApi('POST', '/api/events', {
      dataset: datasetId,
      uniqueId: 'e-big',
      data: bulky,
      eventTimestamp: '2024-05-02T12:00:00Z',
    });
    t.equal(tooLarge.statusCode, 400, 'event data over 256 KiB is refused');
    t.match(tooLarge.json(), { code: 'EVENT_DATA_TOO_LARGE', message: /at most 262144/ });
    const grown = await ownerApi('PATCH', `/api/events/${event.json().doc.id}`, { data: bulky });
    t.equal(grown.statusCode, 400, 'and cannot grow past it either');
    t.match(grown.json(), { code: 'EVENT_DATA_TOO_LARGE' });
    t.match(
      (await ownerApi('GET', '/api/quotas')).json().quotas.totalEvents,
      { used: 1 },
      'the refused event gave its unit back',
    );
    const events = await ownerApi('GET', '/api/events?where[eventTimestamp][less_than]=2025-01-01');
    t.equal(events.json().totalDocs, 1);

    const deleted = await ownerApi('DELETE', `/api/datasets/${datasetId}`);
    t.equal(deleted.statusCode, 200);
    t.match(deleted.json(), { message: 'Deleted successfully.', doc: { id: datasetId } });
    t.equal((await ownerApi('GET', `/api/datasets/${datasetId}`)).statusCode, 404);
    const left = await db.pool.one(
      sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from events`,
    );
    t.equal(left.n, 0, 'events went with their dataset');
  });
});

t.test('malformed where, sort and paging: always 400, never 500, never injection', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t);
  const admin = await createUser({ role: 'admin' });
  const api = as(await login(admin));
  await api('POST', '/api/catalogs', { slug: 'c', title: 'C', isPublic: true });
  const bad = [
    'where[nope][equals]=1',
    'where[slug][regex]=.*',
    'where[slug][equals][x]=1',
    'where[slug]=x',
    'where[id][equals]=abc',
    'where[id][equals]=1;drop table users',
    'where[id][in]=1,2,x',
    "where[isPublic][equals]=true' or '1'='1",
    'where[createdAt][greater_than]=yesterday',
    'where[title][greater_than][0]=a',
    'where[isPublic][less_than]=true',
    'where[id][contains]=1',
    'where[or]=1',
    'where[or][x][slug][equals]=c',
    'where[or][0]=c',
    'where[]=1',
    'where[slug][equals]=a&where[slug][equals]=b',
    'where[slug;drop table users][equals]=c',
    'where[slug"][equals]=c',
    'where[id][equals]=99999999999999999999999',
    'where[title][equals]=%00',
    'sort=password_hash',
    'sort=slug;drop table users',
    'sort=-',
    'limit=0',
    'limit=1001',
    'limit=abc',
    'page=0',
    'page=-1',
    'wherex=1',
    `where${'[and][0]'.repeat(10)}[slug][equals]=c`,
  ];
  for (const query of bad) {
    const response = await api('GET', `/api/catalogs?${query}`);
    t.equal(response.statusCode, 400, `${query} -> ${response.body}`);
    t.match(response.json(), { error: 'Bad Request', message: String }, query);
  }
  const quoted = await api('GET', `/api/catalogs?where[title][equals]=${encodeURIComponent("C' or '1'='1")}`);
  t.equal(quoted.statusCode, 200);
  t.equal(quoted.json().totalDocs, 0, 'a quote in a value is just a character');
  const stillThere = await db.pool.one(
    sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from users`,
  );
  t.equal(stillThere.n, 1, 'the users table is intact');
  const unknown = await api('GET', '/api/catalogs?where[nope][equals]=1');
  t.match(unknown.json(), { code: 'INVALID_WHERE', message: /unknown field "nope"/ });
  const operator = await api('GET', '/api/catalogs?where[slug][regex]=1');
  t.match(operator.json(), { code: 'INVALID_WHERE', message: /unknown operator "regex"/ });
});

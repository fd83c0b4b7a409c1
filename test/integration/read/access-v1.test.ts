import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp, insertAccessFixture, unlimitedAnonymousReads } from '../../helpers/accounts.ts';

// The one access rule, seen through the public read API: a private catalog's events are visible to
// its owner and to admins only, whichever /api/v1 endpoint is asked.

t.test('/api/v1 applies the hierarchical access rule', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const owner = await createUser({ trustLevel: 3 });
  const stranger = await createUser({ trustLevel: 3 });
  const admin = await createUser({ role: 'admin', trustLevel: 5 });

  await insertAccessFixture(db, owner.id);

  const tokens = {
    anonymous: null,
    owner: await login(owner),
    stranger: await login(stranger),
    admin: await login(admin),
  };
  const expected = { anonymous: 5, owner: 10, stranger: 5, admin: 15 };
  const bounds = encodeURIComponent(JSON.stringify({ north: 60, south: 40, east: 20, west: 0 }));

  for (const [who, token] of Object.entries(tokens)) {
    const get = as(token);
    const total = expected[who as keyof typeof expected];
    const list = await get('GET', '/api/v1/events?limit=1000');
    t.equal(list.statusCode, 200, `${who}: events`);
    t.equal(list.json().pagination.totalDocs, total, `${who} sees ${total} events in /events`);
    const slugs = new Set(list.json().events.map((e: { dataset: { title: string } }) => e.dataset.title));
    t.equal(slugs.has('My data'), who === 'owner' || who === 'admin', `${who}: the private catalog`);
    t.equal(
      slugs.has('Private dataset in a public catalog'),
      who === 'admin',
      `${who}: a private dataset in a public catalog (no owner recorded: admins only)`,
    );

    const geo = await get('GET', `/api/v1/events/geo?zoom=16&bounds=${bounds}`);
    const count = geo
      .json()
      .features.reduce(
        (sum: number, f: { properties: { count?: number } }) => sum + (f.properties.count ?? 1),
        0,
      );
    t.equal(count, total, `${who}: /events/geo counts`);

    const temporal = await get('GET', '/api/v1/events/temporal');
    t.equal(temporal.json().metadata.total, total, `${who}: /events/temporal total`);

    const stats = await get('GET', '/api/v1/events/stats?groupBy=catalog');
    t.equal(stats.json().total, total, `${who}: /events/stats total`);

    const mine = await get('GET', '/api/v1/events?catalog=mine');
    t.equal(
      mine.json().pagination.totalDocs,
      who === 'owner' || who === 'admin' ? 5 : 0,
      `${who}: ?catalog=mine`,
    );
  }
});

t.test(
  '/api/v1/events: a change of visibility shows on the next page, whatever was read before',
  async (t) => {
    const { db, as } = await accountsApp(t, { policy: unlimitedAnonymousReads });
    await db.pool.query(sql.unsafe`
    with cat as (
      insert into catalogs (slug, title, is_public) values ('open', 'Open', true) returning id
    ), ds as (
      insert into datasets (catalog_id, slug, title, is_public)
      select id, 'first', 'First', true from cat union all select id, 'second', 'Second', true from cat
      returning id, catalog_id, slug
    )
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select ds.id, ds.catalog_id, ds.slug || '-' || n, 'event ' || n, '{}'::jsonb,
           ST_SetSRID(ST_MakePoint(13.4 + n * 0.001, 52.5), 4326), timestamptz '2025-01-01' + n * interval '1 day'
    from ds cross join generate_series(1, 4) n`);
    const anonymous = as(null);
    const city = encodeURIComponent(JSON.stringify({ north: 52.8, south: 52.2, east: 14.3, west: 12.5 }));
    const pages = {
      catalog: '/api/v1/events?catalog=open',
      datasets: '/api/v1/events?datasets=first,second',
      'city box': `/api/v1/events?catalog=open&bounds=${city}`,
      'no filter': '/api/v1/events',
    };
    const titles = async (path: string) => {
      const response = await anonymous('GET', path);
      t.equal(response.statusCode, 200, path);
      const body = response.json();
      return {
        total: body.pagination.totalDocs as number,
        datasets: [
          ...new Set(body.events.map((e: { dataset: { title: string } }) => e.dataset.title)),
        ].sort(),
      };
    };
    for (const [name, path] of Object.entries(pages)) {
      t.same(await titles(path), { total: 8, datasets: ['First', 'Second'] }, `${name}: both datasets`);
    }
    await db.pool.query(sql.unsafe`update datasets set is_public = false where slug = 'second'`);
    for (const [name, path] of Object.entries(pages)) {
      t.same(await titles(path), { total: 4, datasets: ['First'] }, `${name}: the hidden dataset is gone`);
    }
    await db.pool.query(sql.unsafe`update datasets set is_public = true where slug = 'second'`);
    await db.pool.query(sql.unsafe`update catalogs set is_public = false where slug = 'open'`);
    for (const [name, path] of Object.entries(pages)) {
      t.same(await titles(path), { total: 0, datasets: [] }, `${name}: the hidden catalog is gone`);
    }
  },
);

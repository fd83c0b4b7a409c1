import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  visibleCatalogCondition,
  visibleDatasetCondition,
} from '../../../src/adapters/postgres/visibility.ts';
import { canReadCatalog, canReadDataset, type Viewer } from '../../../src/domain/access.ts';
import { accountsApp } from '../../helpers/accounts.ts';

// One access rule, everywhere: the SQL twin agrees with the domain rule for every combination, and
// no route lets a user read or change what another user keeps private.

t.test('the SQL visibility agrees with the domain rule for every combination', async (t) => {
  const { db, createUser } = await accountsApp(t);
  const alice = await createUser();
  const bob = await createUser();
  const admin = await createUser({ role: 'admin' });
  const viewers: Viewer[] = [null, alice, bob, admin].map((u) =>
    u ? { id: u.id, email: u.email, role: u.role, trustLevel: u.trustLevel } : null,
  );
  const owners = [alice.id, bob.id, null];
  let n = 0;
  for (const catalogPublic of [true, false]) {
    for (const catalogOwner of owners) {
      const catalog = await db.pool.one(sql.type(row(Type.Object({ id: Type.Number() })))`
        insert into catalogs (slug, title, is_public, created_by)
        values (${`c${n}`}, 'C', ${catalogPublic}, ${catalogOwner}) returning id`);
      for (const datasetPublic of [true, false]) {
        for (const datasetOwner of owners) {
          n += 1;
          await db.pool.query(sql.unsafe`
            insert into datasets (catalog_id, slug, title, is_public, created_by)
            values (${catalog.id}, ${`d${n}`}, 'D', ${datasetPublic}, ${datasetOwner})`);
        }
      }
      n += 1;
    }
  }
  const Facts = Type.Object({
    id: Type.Number(),
    catalog_id: Type.Number(),
    c_public: Type.Boolean(),
    c_owner: Type.Union([Type.Number(), Type.Null()]),
    d_public: Type.Boolean(),
    d_owner: Type.Union([Type.Number(), Type.Null()]),
  });
  const all = await db.pool.any(sql.type(row(Facts))`
    select d.id, c.id as catalog_id, c.is_public as c_public, c.created_by as c_owner,
      d.is_public as d_public, d.created_by as d_owner
    from datasets d join catalogs c on c.id = d.catalog_id order by d.id`);
  t.equal(all.length, 36);
  for (const viewer of viewers) {
    const name = viewer ? `${viewer.role} ${viewer.id}` : 'anonymous';
    const Ids = Type.Object({ id: Type.Number() });
    const bySql = (
      await db.pool.any(sql.type(row(Ids))`
        select d.id from datasets d join catalogs c on c.id = d.catalog_id
        where ${visibleDatasetCondition(viewer, { dataset: 'd', catalog: 'c' })} order by d.id`)
    ).map((r) => r.id);
    const byRule = all
      .filter((r) =>
        canReadDataset(
          viewer,
          { isPublic: r.c_public, createdBy: r.c_owner },
          { isPublic: r.d_public, createdBy: r.d_owner },
        ),
      )
      .map((r) => r.id);
    t.same(bySql, byRule, `datasets for ${name}`);
    const catalogsBySql = (
      await db.pool.any(
        sql.type(
          row(Ids),
        )`select c.id from catalogs c where ${visibleCatalogCondition(viewer, 'c')} order by c.id`,
      )
    ).map((r) => r.id);
    const catalogsByRule = [...new Map(all.map((r) => [r.catalog_id, r])).values()]
      .filter((r) => canReadCatalog(viewer, { isPublic: r.c_public, createdBy: r.c_owner }))
      .map((r) => r.catalog_id);
    t.same(catalogsBySql, catalogsByRule, `catalogs for ${name}`);
  }
});

t.test("nobody reads or writes another user's private data through the collections API", async (t) => {
  const { createUser, login, as } = await accountsApp(t);
  const alice = await createUser();
  const bob = await createUser();
  const admin = await createUser({ role: 'admin' });
  const aliceApi = as(await login(alice));
  const bobApi = as(await login(bob));
  const adminApi = as(await login(admin));
  const anonymous = as(null);

  const id = async (
    response: Promise<{ statusCode: number; body: string; json(): { doc: { id: number } } }>,
  ) => {
    const r = await response;
    if (r.statusCode !== 201) throw new Error(r.body);
    return r.json().doc.id;
  };
  const privateCatalog = await id(
    aliceApi('POST', '/api/catalogs', { slug: 'alice-private', title: 'P', isPublic: false }),
  );
  const publicCatalog = await id(
    aliceApi('POST', '/api/catalogs', { slug: 'alice-public', title: 'Q', isPublic: true }),
  );
  const hiddenDataset = await id(
    aliceApi('POST', '/api/datasets', { catalog: privateCatalog, slug: 'hidden', title: 'H' }),
  );
  const privateDataset = await id(
    aliceApi('POST', '/api/datasets', {
      catalog: publicCatalog,
      slug: 'restricted',
      title: 'R',
      isPublic: false,
    }),
  );
  const openDataset = await id(
    aliceApi('POST', '/api/datasets', { catalog: publicCatalog, slug: 'open', title: 'O' }),
  );
  const event = (dataset: number, uniqueId: string) =>
    id(aliceApi('POST', '/api/events', { dataset, uniqueId, eventTimestamp: '2024-01-01T00:00:00Z' }));
  const hiddenEvent = await event(hiddenDataset, 'h1');
  const privateEvent = await event(privateDataset, 'p1');
  const openEvent = await event(openDataset, 'o1');

  const list = async (api: typeof aliceApi, collection: string) =>
    ((await api('GET', `/api/${collection}?limit=100`)).json().docs as { id: number }[])
      .map((d) => d.id)
      .sort();

  t.test('lists show only what each may read', async (t) => {
    for (const [who, api] of [
      ['bob', bobApi],
      ['anonymous', anonymous],
    ] as const) {
      t.same(await list(api, 'catalogs'), [publicCatalog], `${who}: catalogs`);
      t.same(await list(api, 'datasets'), [openDataset], `${who}: datasets`);
      t.same(await list(api, 'events'), [openEvent], `${who}: events`);
    }
    t.same(await list(aliceApi, 'catalogs'), [privateCatalog, publicCatalog].sort());
    t.same(await list(aliceApi, 'events'), [hiddenEvent, privateEvent, openEvent].sort());
    t.same(await list(adminApi, 'datasets'), [hiddenDataset, privateDataset, openDataset].sort());
    const filtered = await bobApi('GET', `/api/datasets?where[id][equals]=${hiddenDataset}`);
    t.equal(filtered.json().totalDocs, 0, 'a filter cannot reach around the rule');
    const orFiltered = await bobApi(
      'GET',
      `/api/datasets?where[or][0][isPublic][equals]=false&where[or][1][id][exists]=true`,
    );
    t.same(
      orFiltered.json().docs.map((d: { id: number }) => d.id),
      [openDataset],
      'an or cannot reach around the rule',
    );
  });

  t.test('reading, changing or deleting one document: 404 when hidden, 403 when only readable', async (t) => {
    const hidden = [
      ['catalogs', privateCatalog],
      ['datasets', hiddenDataset],
      ['datasets', privateDataset],
      ['events', hiddenEvent],
      ['events', privateEvent],
    ] as const;
    for (const [who, api] of [
      ['bob', bobApi],
      ['anonymous', anonymous],
    ] as const) {
      // Changing anything needs a login: anonymous callers get 401 before any lookup.
      const write = who === 'anonymous' ? 401 : 404;
      for (const [collection, docId] of hidden) {
        const url = `/api/${collection}/${docId}`;
        t.equal((await api('GET', url)).statusCode, 404, `${who} GET ${url}`);
        t.equal((await api('PATCH', url, { title: 'Taken' })).statusCode, write, `${who} PATCH ${url}`);
        t.equal((await api('DELETE', url)).statusCode, write, `${who} DELETE ${url}`);
      }
    }
    for (const [collection, docId] of [
      ['catalogs', publicCatalog],
      ['datasets', openDataset],
      ['events', openEvent],
    ] as const) {
      const url = `/api/${collection}/${docId}`;
      t.equal((await bobApi('GET', url)).statusCode, 200, `bob reads public ${url}`);
      t.equal((await bobApi('PATCH', url, { title: 'Taken' })).statusCode, 403, `bob PATCH ${url}`);
      t.equal((await bobApi('DELETE', url)).statusCode, 403, `bob DELETE ${url}`);
      t.equal((await anonymous('PATCH', url, { title: 'Taken' })).statusCode, 401, `anonymous PATCH ${url}`);
    }
    t.equal((await adminApi('GET', `/api/events/${hiddenEvent}`)).statusCode, 200, 'admins read everything');
    t.equal(
      (await aliceApi('GET', `/api/catalogs/${privateCatalog}`)).json().title,
      'P',
      'nothing was changed',
    );
  });

  t.test('nobody adds to, or takes over, what is not theirs', async (t) => {
    const intoPrivate = await bobApi('POST', '/api/datasets', {
      catalog: privateCatalog,
      slug: 'sneaky',
      title: 'S',
    });
    t.equal(intoPrivate.statusCode, 400, 'a hidden catalog does not exist for bob');
    t.equal(intoPrivate.json().code, 'INVALID_REFERENCE');
    const intoPublic = await bobApi('POST', '/api/datasets', {
      catalog: publicCatalog,
      slug: 'sneaky',
      title: 'S',
    });
    t.equal(intoPublic.statusCode, 403, "a visible catalog is still alice's");
    const eventInto = await bobApi('POST', '/api/events', {
      dataset: openDataset,
      uniqueId: 'x',
      eventTimestamp: '2024-01-01T00:00:00Z',
    });
    t.equal(eventInto.statusCode, 403);
    const eventHidden = await bobApi('POST', '/api/events', {
      dataset: hiddenDataset,
      uniqueId: 'x',
      eventTimestamp: '2024-01-01T00:00:00Z',
    });
    t.equal(eventHidden.statusCode, 400);
    const owned = await bobApi('POST', '/api/catalogs', { slug: 'bobs', title: 'B', createdBy: alice.id });
    t.equal(owned.statusCode, 403, 'only admins set createdBy');
    const takeover = await bobApi('PATCH', `/api/catalogs/${publicCatalog}`, { createdBy: bob.id });
    t.equal(takeover.statusCode, 403);
    const anonymousCreate = await anonymous('POST', '/api/catalogs', { slug: 'anon', title: 'A' });
    t.equal(anonymousCreate.statusCode, 401);
  });

  t.test('users: each sees only themselves, and nobody raises their own standing', async (t) => {
    t.same(await list(bobApi, 'users'), [bob.id]);
    t.equal((await anonymous('GET', '/api/users?limit=100')).statusCode, 401, 'accounts are not public');
    t.equal((await list(adminApi, 'users')).length, 3);
    t.equal((await bobApi('GET', `/api/users/${alice.id}`)).statusCode, 404);
    t.equal((await bobApi('PATCH', `/api/users/${alice.id}`, { trustLevel: 0 })).statusCode, 404);
    t.equal((await bobApi('DELETE', `/api/users/${alice.id}`)).statusCode, 404);
    for (const change of [
      { trustLevel: 5 },
      { trustLevel: 2 },
      { role: 'admin' },
      { role: 'admin', trustLevel: 5 },
    ]) {
      const response = await bobApi('PATCH', `/api/users/${bob.id}`, change);
      t.equal(response.statusCode, 403, JSON.stringify(change));
      t.equal(response.json().code, 'STANDING_CHANGE_FORBIDDEN');
    }
    t.equal(
      (await bobApi('PATCH', `/api/users/${bob.id}`, { trustLevel: 1 })).statusCode,
      200,
      'an unchanged level is fine',
    );
    t.equal((await bobApi('PATCH', `/api/users/${bob.id}`, { email: 'new@example.org' })).statusCode, 403);
    t.equal(
      (await bobApi('POST', '/api/users', { email: 'x@example.org', password: 'long enough password' }))
        .statusCode,
      403,
    );
    const me = await bobApi('GET', '/api/users/me');
    t.match(me.json().user, { role: 'user', trustLevel: 1 }, 'still a level 1 user');

    const promoted = await adminApi('PATCH', `/api/users/${bob.id}`, { trustLevel: 3 });
    t.equal(promoted.statusCode, 200);
    t.equal(promoted.json().doc.trustLevel, 3);
    const selfDemote = await adminApi('PATCH', `/api/users/${admin.id}`, { role: 'user' });
    t.equal(selfDemote.statusCode, 403, 'an admin does not lock themselves out');
    const createdUser = await adminApi('POST', '/api/users', {
      email: 'made@example.org',
      password: 'long enough password',
    });
    t.equal(createdUser.statusCode, 201);
    t.match(createdUser.json().doc, { email: 'made@example.org', role: 'user', trustLevel: 1 });
  });
});

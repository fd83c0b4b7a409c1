import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp } from '../../helpers/accounts.ts';

// API keys end to end (issue 38 §3): created with a session and shown once, stored hashed, listed
// with their last use, revoked; a key acts as its owner limited by its scope and catalogs, never
// manages keys, and has its own rate-limit budget.

const Id = row(Type.Object({ id: Type.Number() }));

/** The service with an owner (trusted enough for keys), their session and two private catalogs a and b. */
async function ownerWithTwoCatalogs(t: Test) {
  const accounts = await accountsApp(t);
  const { app, db, createUser, login, as } = accounts;
  await app.ready();
  const owner = await createUser({ trustLevel: 3 });
  const session = as(await login(owner));
  const catalog = async (title: string) =>
    (
      await db.pool.one(sql.type(Id)`insert into catalogs (slug, title, is_public, created_by)
        values (${`${title}-${owner.id}`}, ${title}, false, ${owner.id}) returning id`)
    ).id;
  return { ...accounts, owner, session, a: await catalog('a'), b: await catalog('b') };
}

t.test('API keys: create, use within their limits, revoke', async (t) => {
  const { db, createUser, login, as, session, a, b } = await ownerWithTwoCatalogs(t);

  const created = await session('POST', '/api/api-keys', {
    name: 'reader of A',
    scope: 'read',
    catalogs: [a],
  });
  t.equal(created.statusCode, 201, created.body);
  const { secret, doc } = created.json();
  t.match(secret, /^cmk_\d+_[A-Za-z0-9_-]{43}$/, 'the secret, once');
  t.match(doc, { name: 'reader of A', scope: 'read', catalogs: [a], lastUsedAt: null });
  t.ok(secret.startsWith(doc.prefix), 'the prefix is the start of the secret');
  const stored = await db.pool.oneFirst(
    sql.type(row(Type.Object({ hash: Type.String() })))`
      select encode(secret_hash, 'hex') as hash from api_keys where id = ${doc.id}`,
  );
  // The random part is base64url and may itself hold "_": everything after `cmk_<id>_`.
  const random = secret.split('_').slice(2).join('_');
  t.equal(random.length, 43);
  t.notOk(stored.includes(random), 'only a hash is stored');
  t.equal(stored.length, 64, 'a SHA-256');

  const reader = as(secret);
  t.equal((await reader('GET', `/api/catalogs/${a}`)).statusCode, 200, 'the key reads its catalog');
  t.equal(
    (await reader('GET', `/api/catalogs/${b}`)).statusCode,
    404,
    'not the private catalog it does not cover',
  );
  t.equal((await session('GET', `/api/catalogs/${b}`)).statusCode, 200, 'which the session reads');
  const listed = (await reader('GET', '/api/catalogs')).json();
  t.same(
    listed.docs.map((c: { id: number }) => c.id),
    [a],
    'the list holds only the covered catalog (the SQL twin of the rule)',
  );
  const write = await reader('PATCH', `/api/catalogs/${a}`, { title: 'renamed' });
  t.equal(write.statusCode, 403, 'a read-only key cannot write');
  t.equal(write.json().code, 'API_KEY_READ_ONLY');
  const mint = await reader('POST', '/api/api-keys', { name: 'child', scope: 'write' });
  t.equal(mint.statusCode, 403, 'a key cannot create another key');
  t.equal(mint.json().code, 'API_KEY_NOT_ALLOWED');
  t.equal((await reader('GET', '/api/users/me')).statusCode, 403, 'nor read the account');

  const writer = as(
    (await session('POST', '/api/api-keys', { name: 'writer', scope: 'write' })).json().secret as string,
  );
  t.equal(
    (await writer('PATCH', `/api/catalogs/${b}`, { title: 'renamed' })).statusCode,
    200,
    'a write key writes',
  );
  const other = as(
    (await session('POST', '/api/api-keys', { name: 'B', scope: 'write', catalogs: [b] })).json()
      .secret as string,
  );
  t.equal(
    (await other('PATCH', `/api/catalogs/${a}`, { title: 'x' })).statusCode,
    404,
    'not outside its catalogs',
  );

  const stranger = await createUser();
  const theirs = await as(await login(stranger))('POST', '/api/api-keys', {
    name: 'x',
    scope: 'read',
    catalogs: [a],
  });
  t.equal(theirs.statusCode, 400, "a key cannot cover someone else's catalog");

  const list = (await session('GET', '/api/api-keys')).json().docs as {
    id: number;
    lastUsedAt: string | null;
  }[];
  t.equal(list.length, 3);
  t.ok(list.find((k) => k.id === doc.id)?.lastUsedAt, 'the last use is recorded');
  t.notOk(JSON.stringify(list).includes(secret), 'the list never shows a secret');

  t.equal(
    (await as(await login(stranger))('DELETE', `/api/api-keys/${doc.id}`)).statusCode,
    404,
    'not yours: 404',
  );
  t.equal((await session('DELETE', `/api/api-keys/${doc.id}`)).statusCode, 200);
  const revoked = await reader('GET', '/api/v1/events');
  t.equal(revoked.statusCode, 401, 'a revoked key is refused, even on public routes');
  t.match(revoked.json(), { code: 'API_KEY_INVALID' });
  const unknown = await as(`cmk_999999_${'A'.repeat(43)}`)('GET', `/api/catalogs/${a}`);
  t.equal(unknown.statusCode, 401, 'an unknown key too');
  t.equal((await session('GET', `/api/catalogs/${a}`)).statusCode, 200, 'sessions keep working');
});

t.test(
  'a key limited to some catalogs lists only their imports, schedules and wizard catalogs',
  async (t) => {
    const { db, as, owner, session, a, b } = await ownerWithTwoCatalogs(t);
    for (const [name, catalogId] of [
      ['into-a.csv', a],
      ['into-b.csv', b],
    ] as const) {
      await db.pool
        .query(sql.unsafe`insert into ingest_files (original_name, stored_path, size_bytes, format, catalog_id, uploaded_by)
      values (${name}, ${name}, 1, 'csv', ${catalogId}, ${owner.id})`);
      await db.pool.query(sql.unsafe`insert into scheduled_ingests (name, url, catalog_id, created_by)
      values (${name}, 'https://example.org/feed.csv', ${catalogId}, ${owner.id})`);
    }
    const keyFor = async (catalogs?: number[]) =>
      as(
        (
          await session('POST', '/api/api-keys', {
            name: 'k',
            scope: 'write',
            ...(catalogs ? { catalogs } : {}),
          })
        ).json().secret as string,
      );
    const limited = await keyFor([a]);
    const names = async (caller: typeof session, url: string) =>
      ((await caller('GET', url)).json().docs as Array<{ originalName?: string; name?: string }>)
        .map((doc) => doc.originalName ?? doc.name)
        .sort();
    t.same(
      await names(session, '/api/ingest-files'),
      ['into-a.csv', 'into-b.csv'],
      'the session: every import',
    );
    t.same(
      await names(limited, '/api/ingest-files'),
      ['into-a.csv'],
      'the key: the imports into its catalog',
    );
    t.same(await names(limited, '/api/scheduled-imports'), ['into-a.csv'], 'and its schedules');
    t.same(
      await names(await keyFor(), '/api/scheduled-imports'),
      ['into-a.csv', 'into-b.csv'],
      'an all-catalogs key: all',
    );
    const wizard = (await limited('GET', '/api/catalogs/with-datasets')).json();
    t.same(
      (wizard.catalogs ?? wizard.docs).map((c: { id: number }) => c.id),
      [a],
      'the wizard offers only the catalogs the key covers',
    );
  },
);

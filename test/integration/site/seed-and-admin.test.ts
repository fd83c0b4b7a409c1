import path from 'node:path';
import t from 'tap';
import { Type } from 'typebox';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { csvRows } from '../../../src/adapters/files/local-source-files.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresEventStore } from '../../../src/adapters/postgres/ingest/event-store.ts';
import { postgresSessionStore } from '../../../src/adapters/postgres/accounts/session-store.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../../src/adapters/security/scrypt-password-hasher.ts';
import { createAdmin } from '../../../src/application/accounts/create-admin.ts';
import { seedDemo } from '../../../src/application/site/seed-demo.ts';
import { ValidationError } from '../../../src/domain/errors.ts';
import { type TestDatabase, testDatabase } from '../../helpers/database.ts';

const demoRows = () => csvRows(path.join(projectRoot, 'examples', 'usgs-earthquakes.csv'));

t.test(
  'seed-demo never writes into a user’s catalog or dataset that took the demo’s slugs (issue 28 §7)',
  async (t) => {
    const db = await testDatabase(t);
    const Id = row(Type.Object({ id: Type.Number() }));
    const owner = await db.pool.oneFirst(sql.type(Id)`
    insert into users (email, password_hash, role, trust_level) values ('u@example.org', 'x', 'user', 1) returning id`);
    // A user imported the same file into a private catalog named "demo": the dataset took the file's name.
    const theirCatalog = await db.pool.oneFirst(sql.type(Id)`
    insert into catalogs (slug, title, is_public, created_by) values ('demo', 'Mine', false, ${owner}) returning id`);
    const theirDataset = await db.pool.oneFirst(sql.type(Id)`
    insert into datasets (catalog_id, slug, title, is_public, created_by)
    values (${theirCatalog}, 'usgs-earthquakes', 'usgs-earthquakes', false, ${owner}) returning id`);

    const events = postgresEventStore(db.pool);
    const seeded = await seedDemo({ events }, demoRows());
    t.not(seeded.catalogId, theirCatalog, 'a catalog of its own');
    t.not(seeded.datasetId, theirDataset, 'a dataset of its own');
    t.equal(seeded.inserted, 1943);
    const Facts = row(Type.Object({ slug: Type.String(), is_public: Type.Boolean(), n: Type.Number() }));
    const facts = (id: number) =>
      db.pool.one(sql.type(Facts)`
      select d.slug, d.is_public and c.is_public as is_public, (select count(*)::int from events e where e.dataset_id = d.id) as n
      from datasets d join catalogs c on c.id = d.catalog_id where d.id = ${id}`);
    t.same(
      await facts(theirDataset),
      { slug: 'usgs-earthquakes', is_public: false, n: 0 },
      'theirs untouched',
    );
    t.same(
      await facts(seeded.datasetId),
      { slug: 'usgs-earthquakes-2', is_public: true, n: 1943 },
      'the public demo',
    );
    const again = await seedDemo({ events }, demoRows());
    t.same(
      [again.catalogId, again.datasetId, again.inserted],
      [seeded.catalogId, seeded.datasetId, 0],
      'found again by key',
    );
  },
);

t.test('seed-demo loads every USGS row once, with locations and data, and is idempotent', async (t) => {
  const db = await testDatabase(t);
  const events = postgresEventStore(db.pool);
  const first = await seedDemo({ events }, demoRows());
  t.equal(first.read, 1943);
  t.equal(first.inserted, 1943);
  t.equal(first.invalid, 0);
  const again = await seedDemo({ events }, demoRows());
  t.equal(again.inserted, 0, 'running it again stores nothing new');

  const stored = await db.pool.one(
    sql.type(
      row(
        Type.Object({
          count: Type.Number(),
          located: Type.Number(),
          public_catalog: Type.Boolean(),
          sample_mag: Type.Number(),
          sample_title: Type.String(),
          sample_ts: Type.String(),
        }),
      ),
    )`
      select count(*)::int as count,
             count(location)::int as located,
             bool_and(c.is_public) as public_catalog,
             max((data->>'mag')::float8) filter (where unique_id = 'us7000s8a0') as sample_mag,
             max(e.title) filter (where unique_id = 'us7000s8a0') as sample_title,
             max(event_timestamp) filter (where unique_id = 'us7000s8a0') as sample_ts
      from events e join catalogs c on c.id = e.catalog_id`,
  );
  t.equal(stored.count, 1943);
  t.equal(stored.located, 1943);
  t.equal(stored.public_catalog, true);
  t.equal(stored.sample_mag, 5.4);
  t.equal(stored.sample_title, '145 km E of Hihifo, Tonga');
  t.equal(stored.sample_ts, '2026-03-27T23:35:09.558Z');
});

/** What create-admin needs, on the test's database (cheap scrypt parameters). */
const adminDeps = (db: TestDatabase) => ({
  users: postgresUserStore(db.pool),
  passwords: scryptPasswordHasher({ N: 1024 }),
  sessions: postgresSessionStore(db.pool),
});

t.test('create-admin makes an administrator at trust level 5 and can reset the password', async (t) => {
  const db = await testDatabase(t);
  const deps = adminDeps(db);
  const created = await createAdmin(deps, { email: 'Ada@Example.com', password: 'first password 1' });
  t.equal(created.created, true);
  t.equal(created.role, 'admin');
  t.equal(created.trustLevel, 5);
  const updated = await createAdmin(deps, { email: 'ada@example.com', password: 'second password 2' });
  t.equal(updated.created, false, 'the email matches case-insensitively');
  t.equal(updated.id, created.id);
  const hash = await db.pool.oneFirst(
    sql.type(
      row(Type.Object({ password_hash: Type.String() })),
    )`select password_hash from users where id = ${created.id}`,
  );
  t.equal(await deps.passwords.verify('second password 2', hash), true);
  t.equal(await deps.passwords.verify('first password 1', hash), false);
});

t.test('create-admin resetting a password ends the sessions of the account', async (t) => {
  const db = await testDatabase(t);
  const deps = adminDeps(db);
  const created = await createAdmin(deps, { email: 'grace@example.com', password: 'first password 1' });
  const session = await deps.sessions.create(created.id, new Date(Date.now() + 3_600_000), new Date());
  t.ok(await deps.sessions.findUser(session.id), 'the session is live');
  await createAdmin(deps, { email: 'grace@example.com', password: 'second password 2' });
  t.equal(await deps.sessions.findUser(session.id), null, 'the reset ended it');
});

t.test('create-admin rejects a bad email or a short password before touching the database', async (t) => {
  const db = await testDatabase(t);
  const deps = adminDeps(db);
  await t.rejects(createAdmin(deps, { email: 'not-an-email', password: 'long enough pw' }), ValidationError);
  await t.rejects(createAdmin(deps, { email: 'a@b.org', password: 'short' }), ValidationError);
  t.equal(
    await db.pool.oneFirst(
      sql.type(row(Type.Object({ n: Type.Number() })))`select count(*)::int as n from users`,
    ),
    0,
  );
});

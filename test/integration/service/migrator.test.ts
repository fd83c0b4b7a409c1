import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import t from 'tap';
import {
  loadMigrations,
  type Migration,
  MigrationError,
  migrate,
} from '../../../src/adapters/postgres/migrator.ts';
import { postgresDatabaseStatus } from '../../../src/adapters/postgres/site/database-status.ts';
import { type TestDatabase, testDatabase } from '../../helpers/database.ts';

function migrationsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-migrations-'));
  for (const [name, sql] of Object.entries(files)) writeFileSync(path.join(dir, name), sql);
  return dir;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

// What the health check reports as pending (GET /api/health), which is how the service asks.
const pendingMigrations = (db: TestDatabase, migrations: Migration[]) =>
  postgresDatabaseStatus(db.pool, migrations).pendingMigrations();

t.test('the template database has every migration of the repository applied', async (t) => {
  const db = await testDatabase(t);
  const pending = await pendingMigrations(db, loadMigrations());
  t.same(pending, []);
});

t.test('new migrations apply once, in order, and are reported as pending before', async (t) => {
  const db = await testDatabase(t);
  const dir = migrationsDir({
    '0001_foundation.sql': loadMigrations()[0]?.sql ?? '',
    '9001_a.sql': 'create table demo_a (id int);',
    '9002_b.sql': 'insert into demo_a values (1);',
  });
  const migrations = [...loadMigrations(), ...loadMigrations(dir).filter((m) => m.name.startsWith('9'))];
  t.same(await pendingMigrations(db, migrations), ['9001_a.sql', '9002_b.sql']);
  t.same(await migrate(db.url, migrations), ['9001_a.sql', '9002_b.sql']);
  t.same(await migrate(db.url, migrations), [], 'a second run applies nothing');
  const count = await withClient(db.url, (c) => c.query('select count(*)::int as n from demo_a'));
  t.equal(count.rows[0].n, 1);
});

t.test('a failing migration is rolled back whole and reported', async (t) => {
  const db = await testDatabase(t);
  const migrations = [
    ...loadMigrations(),
    ...loadMigrations(
      migrationsDir({ '9001_half.sql': 'create table half_done (id int);\nselect * from no_such_table;' }),
    ),
  ];
  const error = await t.rejects(migrate(db.url, migrations));
  t.ok(error instanceof MigrationError);
  t.match((error as Error).message, /9001_half\.sql failed and was rolled back: .*no_such_table/);
  const exists = await withClient(db.url, (c) => c.query("select to_regclass('half_done') is not null as e"));
  t.equal(exists.rows[0].e, false, 'the table created before the failing statement is gone');
  t.same(await pendingMigrations(db, migrations), ['9001_half.sql']);
});

t.test('an applied migration that was edited is refused', async (t) => {
  const db = await testDatabase(t);
  const edited = loadMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'different' } : m));
  await t.rejects(migrate(db.url, edited), /0001_foundation\.sql was changed after it was applied/);
});

t.test('concurrent migrators apply each migration exactly once (advisory lock)', async (t) => {
  const db = await testDatabase(t);
  const migrations = [
    ...loadMigrations(),
    ...loadMigrations(migrationsDir({ '9001_once.sql': 'create table applied_once (id int);' })),
  ];
  const results = await Promise.all([1, 2, 3, 4].map(() => migrate(db.url, migrations)));
  t.same(results.flat(), ['9001_once.sql'], 'exactly one process applied it');
});

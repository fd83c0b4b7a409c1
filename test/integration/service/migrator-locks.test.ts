import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import t, { type Test } from 'tap';
import { loadMigrations, MigrationError, migrate } from '../../../src/adapters/postgres/migrator.ts';
import { type TestDatabase, testDatabase } from '../../helpers/database.ts';

// Migrations under lock_timeout with retries, and files run outside a transaction (CREATE INDEX
// CONCURRENTLY). Nothing here is timed: each step waits for what PostgreSQL reports (pg_locks,
// pg_index, a statement completing) while the test holds the blocking transaction open.

const FAST = { lockTimeoutMs: 200, retryDelayMs: 20 };

function migrationsWith(t: Test, files: Record<string, string>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-migrations-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, sql] of Object.entries(files)) writeFileSync(path.join(dir, name), sql);
  return [...loadMigrations(), ...loadMigrations(dir)];
}

async function connect(t: Test, db: TestDatabase, applicationName: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db.url, application_name: applicationName });
  await client.connect();
  t.teardown(() => client.end().catch(() => {}));
  return client;
}

/** A fresh database with `lock_demo` holding `rows` rows, and a session to look at it with. */
async function demoDatabase(t: Test, rows: number) {
  const db = await testDatabase(t);
  const probe = await connect(t, db, 'test-probe');
  await probe.query(
    `create table lock_demo (id int); insert into lock_demo select generate_series(1, ${rows})`,
  );
  return { db, probe };
}

/** A session that read `table` in a transaction it keeps open: it holds ACCESS SHARE on the table and a snapshot. */
async function openReader(t: Test, db: TestDatabase, table: string) {
  const client = await connect(t, db, 'test-blocker');
  const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid as number;
  await client.query('begin isolation level repeatable read');
  await client.query(`select count(*) from ${table}`);
  return { client, pid, end: () => client.query('commit') };
}

/** Polls pg_locks until the migrator (`application_name=test-migrator`) waits for a lock on lock_demo; its mode. */
async function migratorWaiting(probe: pg.Client): Promise<string> {
  for (;;) {
    const found = await probe.query<{ mode: string }>(
      `select l.mode from pg_stat_activity a join pg_locks l on l.pid = a.pid
       where a.datname = current_database() and a.application_name = 'test-migrator'
         and not l.granted and l.relation = 'lock_demo'::regclass`,
    );
    if (found.rows[0]) return found.rows[0].mode;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const asMigrator = (db: TestDatabase) =>
  `${db.url}${db.url.includes('?') ? '&' : '?'}application_name=test-migrator`;

const isValidIndex = async (client: pg.Client, name: string) =>
  (
    await client.query<{ valid: boolean | null }>(
      `select (select indisvalid from pg_index where indexrelid = to_regclass($1)) as valid`,
      [name],
    )
  ).rows[0]?.valid ?? null;

t.test(
  'a migration waiting for a lock does not queue readers behind it for longer than lock_timeout',
  async (t) => {
    const { db, probe } = await demoDatabase(t, 2);
    const blocker = await openReader(t, db, 'lock_demo');
    const migrations = migrationsWith(t, {
      '9001_add_column.sql': 'alter table lock_demo add column note text;',
    });

    const lines: string[] = [];
    const migrating = migrate(asMigrator(db), migrations, (line) => lines.push(line), {
      ...FAST,
      attempts: 1_000,
    });
    t.equal(await migratorWaiting(probe), 'AccessExclusiveLock', 'the migration waits for ACCESS EXCLUSIVE');
    // Without lock_timeout this reader would queue behind the migrator's pending ACCESS EXCLUSIVE,
    // and the migrator behind the blocker, which ends only after the reader: the test would hang.
    const reader = await connect(t, db, 'test-reader');
    const read = await reader.query<{ n: number }>('select count(*)::int as n from lock_demo');
    t.equal(read.rows[0]?.n, 2, 'a reader started while the migration waits completes');
    // The reader went on once an attempt gave up; that attempt's log line is written before the
    // blocker may end, so it names the blocker.
    while (!lines.some((line) => line.includes('attempt 1 of 1000')))
      await new Promise((resolve) => setTimeout(resolve, 10));
    t.match(
      lines.join('\n'),
      /9001_add_column\.sql: a lock was not granted within 200 ms \(attempt 1 of 1000; held by pid \d+ \(application_name "test-blocker"/,
      'each retry is logged with the session that held the lock',
    );
    const held = await probe.query<{ held: boolean; open: boolean }>(
      `select exists (select 1 from pg_locks where pid = $1 and granted and relation = 'lock_demo'::regclass) as held,
            exists (select 1 from pg_stat_activity where pid = $1 and state = 'idle in transaction') as open`,
      [blocker.pid],
    );
    t.same(held.rows[0], { held: true, open: true }, '... while the blocker still holds its lock');
    const recorded = await probe.query(
      `select 1 from chronomap_migrations where name = '9001_add_column.sql'`,
    );
    t.equal(recorded.rowCount, 0, 'the migration has not landed yet');

    await blocker.end();
    t.same(await migrating, ['9001_add_column.sql'], 'the migration lands once the blocker ends');
    t.equal((await probe.query('select note from lock_demo')).rowCount, 2, 'the column exists');
  },
);

t.test('after its last attempt a migration fails naming the session that held the lock', async (t) => {
  const { db, probe } = await demoDatabase(t, 0);
  const blocker = await openReader(t, db, 'lock_demo');
  const migrations = migrationsWith(t, {
    '9001_add_column.sql': 'alter table lock_demo add column note text;',
  });
  const error = await t.rejects(migrate(db.url, migrations, () => {}, { ...FAST, attempts: 2 }));
  t.ok(error instanceof MigrationError);
  t.match(
    (error as Error).message,
    new RegExp(
      `9001_add_column\\.sql was not applied: a lock it needs was not granted within lock_timeout \\(200 ms\\) ` +
        `in 2 attempt\\(s\\); the oldest open transactions: pid ${blocker.pid} ` +
        `\\(application_name "test-blocker".*last statement: "select count\\(\\*\\) from lock_demo"`,
    ),
  );
  const column = await probe.query(
    `select 1 from information_schema.columns where table_name = 'lock_demo' and column_name = 'note'`,
  );
  t.equal(column.rowCount, 0, 'nothing of it was applied');
  await blocker.end();
  t.same(
    await migrate(db.url, migrations, () => {}, FAST),
    ['9001_add_column.sql'],
    'it applies once the blocker is gone',
  );
});

const CONCURRENT_INDEXES = [
  '-- chronomap:no-transaction',
  '-- Built without blocking writers; IF NOT EXISTS so that the file can run again.',
  'create index concurrently if not exists lock_demo_id on lock_demo (id);',
  "create index concurrently if not exists lock_demo_semi on lock_demo ((id::text || ';'));",
].join('\n');

t.test(
  'a file marked no-transaction runs CREATE INDEX CONCURRENTLY; without the marker it cannot',
  async (t) => {
    const { db, probe } = await demoDatabase(t, 100);
    const unmarked = migrationsWith(t, { '9001_indexes.sql': CONCURRENT_INDEXES.replace(/^.*\n/, '') });
    await t.rejects(
      migrate(db.url, unmarked),
      /9001_indexes\.sql failed and was rolled back: .*cannot run inside a transaction block/,
    );
    const marked = migrationsWith(t, { '9001_indexes.sql': CONCURRENT_INDEXES });
    t.same(await migrate(db.url, marked), ['9001_indexes.sql']);
    t.equal(await isValidIndex(probe, 'lock_demo_id'), true);
    t.equal(
      await isValidIndex(probe, 'lock_demo_semi'),
      true,
      'a semicolon inside quotes does not split a statement',
    );
  },
);

t.test(
  'an index CONCURRENTLY left INVALID by a failed run is dropped and built again on the next run',
  async (t) => {
    const { db, probe } = await demoDatabase(t, 100);
    // CREATE INDEX CONCURRENTLY waits for every transaction holding an older snapshot: this one.
    const blocker = await openReader(t, db, 'lock_demo');
    const migrations = migrationsWith(t, { '9001_indexes.sql': CONCURRENT_INDEXES });
    await t.rejects(
      migrate(db.url, migrations, () => {}, { ...FAST, attempts: 1 }),
      /9001_indexes\.sql was not applied: a lock it needs was not granted.*"test-blocker"/,
    );
    t.equal(await isValidIndex(probe, 'lock_demo_id'), false, 'the failed build left an INVALID index');
    const before = await probe.query<{ oid: number }>(`select 'lock_demo_id'::regclass::oid::int as oid`);
    await blocker.end();
    const lines: string[] = [];
    t.same(await migrate(db.url, migrations, (line) => lines.push(line), FAST), ['9001_indexes.sql']);
    t.equal(await isValidIndex(probe, 'lock_demo_id'), true, 'the index was built again, valid');
    const after = await probe.query<{ oid: number }>(`select 'lock_demo_id'::regclass::oid::int as oid`);
    t.not(after.rows[0]?.oid, before.rows[0]?.oid, 'a new index, not the invalid one kept by IF NOT EXISTS');
    t.equal(await isValidIndex(probe, 'lock_demo_semi'), true);
  },
);

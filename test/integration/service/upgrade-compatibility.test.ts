import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { loadMigrations } from '../../../src/adapters/postgres/migrator.ts';
import { postgresDatabaseStatus } from '../../../src/adapters/postgres/site/database-status.ts';
import { multipart } from '../../fixtures/ingest/client.ts';
import { PASSWORD, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { waitForOutput } from '../../helpers/cli.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import { testDatabase } from '../../helpers/database.ts';
import { checkoutRelease, lockfileMismatches, previousRelease } from '../../helpers/previous-release.ts';
import { killProcessGroup } from '../../helpers/processes.ts';
import { request } from '../../helpers/scale-out.ts';

// The upgrade rule (docs/upgrading.md): version N's processes keep working on version N+1's schema,
// since during an upgrade the old processes run on after the new ones migrated. The previous
// release's own code (a worktree of its tag) runs its API and its worker on a database migrated by
// this checkout, and an upload goes through them: login, a catalog, an import, reads.
t.setTimeout(4 * 60_000);

const ROWS = 30;
const csv = ['id,time,latitude,longitude,title']
  .concat(
    Array.from({ length: ROWS }, (_, i) => `u${i},2026-01-0${1 + (i % 9)}T12:00:00Z,${i},${-i},Upgrade ${i}`),
  )
  .join('\n');

function startOld(t: Test, bin: string, args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(bin, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, killed whole at teardown
  });
  t.teardown(() => killProcessGroup(child));
  return child;
}

const Done = row(Type.Object({ done: Type.Boolean() }));

const json = (outcome: { status: number; body: string }, expected: number, what: string) => {
  if (outcome.status !== expected) throw new Error(`${what}: ${outcome.status} ${outcome.body}`);
  return JSON.parse(outcome.body) as Record<string, unknown>;
};

t.test("the previous release's API and worker run on this version's schema", async (t) => {
  const { ref, commit } = previousRelease();
  t.comment(`previous release: ${ref} (${commit})`);
  t.same(lockfileMismatches(commit), [], `every package ${ref} pins is installed here at its version`);
  const checkedOut = Date.now();
  const checkout = checkoutRelease(t, commit);
  t.comment(`checked out in ${Date.now() - checkedOut} ms`);
  const bin = path.join(checkout, 'bin', 'chronomap');

  // Migrated by this checkout: the template of the run is built by its migrator and pg-boss.
  const db = await testDatabase(t);
  t.same(await postgresDatabaseStatus(db.pool, loadMigrations()).pendingMigrations(), []);
  const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-previous-data-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    DATABASE_URL: db.url,
    SESSION_SECRET: TEST_SESSION_SECRET,
    CHRONOMAP_DATA_DIR: dataDir,
    GEOCODER: 'off',
    API_PROCESSES: '1',
    HOST: '127.0.0.1',
    PORT: '0',
  };
  const email = `upgrade-${process.pid}@example.org`;
  // The three processes start together: each one's start-up is mostly Node loading the code.
  const started = Date.now();
  const admin = startOld(t, bin, ['create-admin', '--email', email, '--password', PASSWORD], env);
  const adminExit = new Promise<number | null>((resolve) => admin.on('close', resolve));
  const api = startOld(t, bin, ['api'], env);
  const worker = startOld(t, bin, ['worker'], env);
  const [, base] = (await waitForOutput(api, /listening on (http:\/\/\S+)/)) as RegExpMatchArray;
  await waitForOutput(worker, /chronomap worker running/);
  t.equal(await adminExit, 0, `${ref}'s create-admin`);
  t.comment(`${ref}'s processes started in ${Date.now() - started} ms`);
  for (const child of [api, worker]) {
    child.stdout?.resume();
    child.stderr?.resume();
  }

  const login = json(
    await request(`${base}/api/users/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ email, password: PASSWORD })),
    }),
    200,
    'login',
  );
  const auth = { authorization: `Bearer ${login.token as string}` };
  const catalog = json(
    await request(`${base}/api/catalogs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: Buffer.from(JSON.stringify({ slug: 'upgrade', title: 'Upgrade', isPublic: true })),
    }),
    201,
    'create a catalog',
  ).doc as { id: number };
  // The level-16 cells switched off by this version's switch (docs/scaling.md, "Step 3"), as on an
  // installation of spread-out data: the old version's writers must leave them empty.
  await db.pool.query(sql.unsafe`select chronomap_fine_cells_drain()`);
  await db.pool.query(sql.unsafe`select chronomap_fine_cells_drop()`);
  const form = multipart({ catalog: String(catalog.id) }, { name: 'upgrade.csv', content: csv });
  json(
    await request(`${base}/api/ingest-files`, {
      method: 'POST',
      headers: { ...form.headers, ...auth },
      body: form.payload,
    }),
    201,
    'upload',
  );

  // The old worker imports it; polled through the old API until every row is there (or 60 s).
  const events = `${base}/api/v1/events?catalog=upgrade&limit=100`;
  let page: { events: { title: string }[]; pagination: { totalDocs: number } } | undefined;
  for (let i = 0; i < 600 && (page?.pagination.totalDocs ?? 0) < ROWS; i += 1) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    page = json(await request(events, { headers: auth }), 200, 'read events') as typeof page;
  }
  t.comment(`logged in, uploaded and imported ${Date.now() - started} ms after the start`);
  t.equal(page?.pagination.totalDocs, ROWS, `${ref}'s worker imported every row`);
  t.same(
    page?.events.map((e) => e.title).sort(),
    Array.from({ length: ROWS }, (_, i) => `Upgrade ${i}`).sort(),
    `${ref}'s API reads them back`,
  );
  const anonymous = await request(`${base}/api/v1/events?catalog=upgrade&limit=1`);
  t.equal(anonymous.status, 200, 'an anonymous read of the public catalog');
  // Counts this version added (such as the all-time cells, migration 0963) are kept right even
  // when the old version's code writes the events.
  await assertCountTablesExact(t, db.pool, `after ${ref}'s import, the level-16 cells off`);
  t.equal(
    await db.pool.oneFirst(sql.type(Done)`select chronomap_fine_cells_rebuild() as done`),
    true,
    'rebuilt under the old processes',
  );
  await assertCountTablesExact(t, db.pool, `the level-16 cells rebuilt after ${ref}'s import`);
});

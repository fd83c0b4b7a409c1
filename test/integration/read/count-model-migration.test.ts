import { randomBytes } from 'node:crypto';
import t from 'tap';
import { Type } from 'typebox';
import { createDatabasePool, row, sql } from '../../../src/adapters/postgres/database.ts';
import { loadMigrations, migrate } from '../../../src/adapters/postgres/migrator.ts';
import { assertCountTablesExact } from '../../helpers/count-tables.ts';
import { adminQuery } from '../../helpers/database.ts';
import { assertTestDatabaseName, loadTestServer, withDatabase } from '../../helpers/test-server.ts';
import { loadReadFixture } from '../../helpers/v1-fixture.ts';

// Migrations 0967 and 0968 on a database that holds events counted the way release v0.6 counts
// them (migrations up to 0966): afterwards every count table is what this release keeps (the
// datasets' month rows, the totals' months and years, the derived rows from them), the rows no one
// writes any more are gone, and the writes after the upgrade keep it so.
t.setTimeout(3 * 60_000);

const FIRST_NEW = '0967';

const Count = row(Type.Object({ n: Type.Number() }));
const UNWRITTEN = sql.fragment`
  select (select count(*) from event_cell_counts
          where (grain in ('y', 'm') and dataset_id < 0) or (grain = 'y' and dataset_id > 0))
       + (select count(*) from event_coarse_cell_counts where grain = 'y' and dataset_id < 0) as n`;

t.test('the count model of v0.6 migrated to the one this release writes', async (t) => {
  const server = loadTestServer();
  const name = `chronomap_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  assertTestDatabaseName(name);
  await adminQuery(server.adminUrl, `create database ${name}`);
  const url = withDatabase(server.adminUrl, name);
  const pool = await createDatabasePool(url, { maximumPoolSize: 3 });
  t.teardown(async () => {
    await pool.end();
    await adminQuery(server.adminUrl, `drop database if exists ${name} with (force)`);
  });

  const migrations = loadMigrations();
  t.ok(
    migrations.some((migration) => migration.name.startsWith(FIRST_NEW)),
    `migration ${FIRST_NEW} exists`,
  );
  await migrate(
    url,
    migrations.filter((migration) => migration.name < FIRST_NEW),
  );

  // Events in every dataset, over the world and over eleven years, counted by 0966's triggers.
  await loadReadFixture(pool);
  await pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, 'spread-' || n, 'spread ' || n, '{}'::jsonb,
           st_setsrid(st_makepoint(((n * 7919) % 35900) / 100.0 - 179.5, ((n * 104729) % 15000) / 100.0 - 75), 4326),
           timestamptz '2015-01-01' + ((n * 7793) % 4000) * interval '1 day'
    from generate_series(1, 1500) n
    join (select id, catalog_id, row_number() over (order by id) - 1 as k from datasets) d on d.k = n % 3`);
  const before = await pool.oneFirst(sql.type(Count)`${UNWRITTEN}`);
  t.ok(before > 1000, `before the upgrade the catalogs' and datasets' rows are there (${before})`);

  const applied = await migrate(url, migrations);
  t.same(
    applied.map((migration) => migration.slice(0, 4)),
    migrations.filter((m) => m.name >= FIRST_NEW).map((m) => m.name.slice(0, 4)),
    'the new migrations applied',
  );
  t.equal(await pool.oneFirst(sql.type(Count)`${UNWRITTEN}`), 0, 'the unwritten rows are gone');
  await assertCountTablesExact(t, pool, 'after the migrations');

  // The writes after it: inserts, deletes, moves in time and space, a dataset to another catalog.
  await pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, 'after-' || n, 'after ' || n, '{}'::jsonb,
           st_setsrid(st_makepoint(((n * 613) % 35900) / 100.0 - 179.5, ((n * 409) % 15000) / 100.0 - 75), 4326),
           timestamptz '2014-06-01' + ((n * 311) % 4500) * interval '1 day'
    from generate_series(1, 600) n
    join (select id, catalog_id, row_number() over (order by id) - 1 as k from datasets) d on d.k = n % 3`);
  await pool.query(sql.unsafe`delete from events where unique_id like 'spread-%' and id % 5 = 0`);
  await pool.query(sql.unsafe`
    update events set location = st_setsrid(st_makepoint(st_x(location) / 3, st_y(location) / 3), 4326),
                      event_timestamp = event_timestamp - interval '200 days'
    where unique_id like 'spread-%' and id % 7 = 0`);
  await pool.query(sql.unsafe`
    update datasets set catalog_id = (select id from catalogs where slug = 'news') where slug = 'exhibitions'`);
  t.equal(await pool.oneFirst(sql.type(Count)`${UNWRITTEN}`), 0, 'and none is written again');
  await assertCountTablesExact(t, pool, 'after the writes that followed');
});

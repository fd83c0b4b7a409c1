import { mkdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { startJobQueue } from '../../src/adapters/jobs/job-queue.ts';
import { ensureEmbeddedCluster } from '../../src/adapters/postgres/embedded-cluster.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import {
  assertTestDatabaseName,
  databaseName,
  saveTestServer,
  TEMPLATE_DATABASE,
  type TestServer,
  withDatabase,
} from '../helpers/test-server.ts';
import { startPostgisContainer } from './postgis-container.ts';

// Runs once before all test files (tap's `before`): finds a PostgreSQL with PostGIS, in this order,
//   1. TEST_DATABASE_URL (or DATABASE_URL): a server you run; its database name must contain "test";
//   2. Testcontainers with the locally built image localhost/chronomap-postgis:15 when a Docker-compatible
//      engine (podman's API socket counts) is reachable;
//   3. the embedded cluster under .data/test-postgres.
// and builds a migrated template database that every test file clones.

const log = (line: string) => process.stdout.write(`# test database: ${line}\n`);

async function chooseServer(): Promise<TestServer> {
  const explicit = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  if (explicit) {
    assertTestDatabaseName(databaseName(explicit));
    return { adminUrl: explicit, template: TEMPLATE_DATABASE, source: 'TEST_DATABASE_URL' };
  }
  if (process.env.CHRONOMAP_TEST_EMBEDDED !== '1') {
    const container = await startPostgisContainer(log);
    if (container) {
      return {
        adminUrl: container.url,
        template: TEMPLATE_DATABASE,
        source: 'testcontainers',
        containerId: container.id,
      };
    }
  }
  const cluster = await ensureEmbeddedCluster({
    dataDir: path.join(projectRoot, '.data', 'test-postgres'),
    log,
    durability: 'disposable', // rebuilt at will: fsync off
  });
  return { adminUrl: cluster.url('postgres'), template: TEMPLATE_DATABASE, source: 'embedded' };
}

async function buildTemplate(server: TestServer): Promise<void> {
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${TEMPLATE_DATABASE} with (force)`);
    await admin.query(`create database ${TEMPLATE_DATABASE}`);
  } finally {
    await admin.end();
  }
  const templateUrl = withDatabase(server.adminUrl, TEMPLATE_DATABASE);
  await migrate(templateUrl, loadMigrations());
  const boss = await startJobQueue(templateUrl, 'migrate', () => {});
  await boss.stop({ graceful: false });
}

mkdirSync(path.join(projectRoot, '.data'), { recursive: true });
const server = await chooseServer();
log(`${server.source}`);
await buildTemplate(server);
saveTestServer(server);
// A container-engine call abandoned after its timeout may still hold a socket open: do not wait for it.
process.exit(0);

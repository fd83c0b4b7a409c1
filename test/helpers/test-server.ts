import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/adapters/config/environment.ts';

// Where the suite's PostgreSQL lives, decided once by test/setup/global-setup.ts and read by each test file.

export type TestServer = {
  /** A URL of the server's maintenance database, used to create and drop per-file databases. */
  adminUrl: string;
  template: string;
  source: 'TEST_DATABASE_URL' | 'testcontainers' | 'embedded';
  containerId?: string;
};

/**
 * The migrated template every test file clones. CHRONOMAP_TEST_TEMPLATE names another one, so that
 * several checkouts (git worktrees) can run their suites against one shared server at once.
 */
export const TEMPLATE_DATABASE = process.env.CHRONOMAP_TEST_TEMPLATE ?? 'chronomap_test_template';
const STATE_FILE = path.join(projectRoot, '.data', 'test-server.json');

export function saveTestServer(server: TestServer): void {
  writeFileSync(STATE_FILE, `${JSON.stringify(server, null, 2)}\n`);
}

export function loadTestServer(): TestServer {
  if (!existsSync(STATE_FILE)) {
    throw new Error(
      'no test database server: run the tests with `npm test` (tap runs test/setup/global-setup.ts first)',
    );
  }
  return JSON.parse(readFileSync(STATE_FILE, 'utf8')) as TestServer;
}

/** Refuses to touch a database whose name does not say it is for tests. */
export function assertTestDatabaseName(name: string): void {
  if (!/test/i.test(name)) {
    throw new Error(`refusing to run tests against database "${name}": its name must contain "test"`);
  }
}

/** Same server, another database. Works for TCP URLs and socket URLs (`postgresql:///db?host=/dir`). */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export function databaseName(url: string): string {
  return decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
}

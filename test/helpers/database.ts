import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Test } from 'tap';
import { createDatabasePool, type DatabasePool } from '../../src/adapters/postgres/database.ts';
import { assertTestDatabaseName, loadTestServer, withDatabase } from './test-server.ts';

export type TestDatabase = { name: string; url: string; pool: DatabasePool };

/** A fresh, migrated database for one test file, cloned from the template and dropped afterwards. */
export async function testDatabase(t: Test): Promise<TestDatabase> {
  const server = loadTestServer();
  const name = `chronomap_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  assertTestDatabaseName(name);
  await adminQuery(server.adminUrl, `create database ${name} template ${server.template}`);
  const url = withDatabase(server.adminUrl, name);
  const pool = await createDatabasePool(url, { maximumPoolSize: 5 });
  t.teardown(async () => {
    await pool.end();
    await adminQuery(server.adminUrl, `drop database if exists ${name} with (force)`);
  });
  return { name, url, pool };
}

export async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

import path from 'node:path';
import pg from 'pg';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { ensureDatabase, ensureEmbeddedCluster } from '../../src/adapters/postgres/embedded-cluster.ts';

// Where the benchmark's data lives: BENCH_DATABASE_URL, else a database `chronomap_bench` in this
// checkout's embedded cluster (.data/postgres, the same server `chronomap start` uses, never the dev
// or test database). Refuses any database whose name does not say it is for benchmarks.

export const BENCH_DATABASE = 'chronomap_bench';

export async function benchDatabaseUrl(): Promise<string> {
  const explicit = process.env.BENCH_DATABASE_URL;
  const url = explicit ?? (await embeddedBenchUrl());
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ''));
  if (!/bench/i.test(name))
    throw new Error(`refusing to use database "${name}" for benchmarks: its name must contain "bench"`);
  return url;
}

async function embeddedBenchUrl(): Promise<string> {
  const cluster = await ensureEmbeddedCluster({
    dataDir: path.join(projectRoot, '.data', 'postgres'),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await ensureDatabase(cluster.url('postgres'), BENCH_DATABASE);
  return cluster.url(BENCH_DATABASE);
}

export async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

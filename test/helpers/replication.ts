import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import {
  type EmbeddedCluster,
  ensureDatabase,
  ensureEmbeddedCluster,
  postgresBinDir,
} from '../../src/adapters/postgres/embedded-cluster.ts';
import { runCli } from './cli.ts';

// A real primary and a real hot standby made from the system's PostgreSQL binaries: the primary is
// an embedded cluster (Unix socket only), the standby a `pg_basebackup -R -c fast` copy of it
// started on a socket of its own, streaming from the primary. Both are removed when stopped.

export type ReplicationPair = {
  primary: EmbeddedCluster;
  standby: EmbeddedCluster;
  /** Starts the standby again after `standby.stop()` (it catches up by streaming). */
  restartStandby(): Promise<EmbeddedCluster>;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(database: string): Promise<void>;
  remove(): Promise<void>;
};

function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  return { uid: Number(uid), gid: Number(gid) };
}

export async function startReplicationPair(): Promise<ReplicationPair> {
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-replication-'));
  chmodSync(dir, 0o755); // as root the clusters run as postgres, which must reach them
  const primaryDir = path.join(dir, 'primary');
  const standbyDir = path.join(dir, 'standby');
  const primary = await ensureEmbeddedCluster({ dataDir: primaryDir, durability: 'disposable' });
  const startStandby = () => ensureEmbeddedCluster({ dataDir: standbyDir, durability: 'disposable' });
  let standby = await createStandby(primary, standbyDir);
  return {
    primary,
    get standby() {
      return standby;
    },
    async restartStandby() {
      standby = await startStandby();
      return standby;
    },
    async caughtUp(database) {
      const target = await scalar(primary.url(database), 'select pg_current_wal_insert_lsn()::text');
      for (let attempt = 0; attempt < 200; attempt += 1) {
        const done = await scalar(
          standby.url(database),
          `select pg_last_wal_replay_lsn() >= '${target}'::pg_lsn`,
        ).catch(() => 'false');
        if (done === 'true') return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`the standby did not replay up to ${target} within 10 s`);
    },
    async remove() {
      await standby.stop().catch(() => {});
      await primary.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A pair whose primary has a migrated `chronomap` database with the demo data, replayed by the
 * standby; removed when the test ends.
 */
export async function startSeededPair(t: {
  teardown(fn: () => Promise<void>): void;
}): Promise<{ pair: ReplicationPair; primaryUrl: string }> {
  const pair = await startReplicationPair();
  t.teardown(() => pair.remove());
  await ensureDatabase(pair.primary.url('postgres'), 'chronomap');
  const primaryUrl = pair.primary.url('chronomap');
  for (const command of ['migrate', 'seed-demo']) {
    const result = await runCli([command], { DATABASE_URL: primaryUrl });
    if (result.code !== 0) throw new Error(`${command} failed: ${result.stderr}`);
  }
  await pair.caughtUp('chronomap');
  return { pair, primaryUrl };
}

/**
 * A hot standby of `primary` in `standbyDir` (which must not exist yet): `pg_basebackup -R -c fast`
 * over the primary's socket, then started on a socket of its own. The read-replica benchmark
 * (bench/replicas/run.ts) makes its standby of the 1M-event primary the same way.
 */
export async function createStandby(primary: EmbeddedCluster, standbyDir: string): Promise<EmbeddedCluster> {
  const owner = postgresUser();
  mkdirSync(standbyDir, { mode: 0o700 });
  if (owner) chownSync(standbyDir, owner.uid, owner.gid);
  execFileSync(
    path.join(postgresBinDir(), 'pg_basebackup'),
    ['-h', primary.socketDir, '-U', 'postgres', '-D', standbyDir, '-R', '-c', 'fast', '-X', 'stream'],
    { stdio: 'pipe', cwd: '/', ...(owner ?? {}) },
  );
  return ensureEmbeddedCluster({ dataDir: standbyDir, durability: 'disposable' });
}

export async function scalar(url: string, text: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(text);
    return String(Object.values(result.rows[0] ?? {})[0]);
  } finally {
    await client.end();
  }
}

import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import {
  type EmbeddedCluster,
  ensureDatabase,
  ensureEmbeddedCluster,
} from '../../src/adapters/postgres/embedded-cluster.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { type FrozenCluster, freezeCluster } from './frozen-cluster.ts';

// A PostgreSQL of the test's own, to take away and give back: an embedded cluster (Unix socket
// only, as `chronomap start` runs one) in a temporary directory, with one migrated database.
// `stop()` is `pg_ctl stop -m fast` (the socket file goes, connections drop), `start()` brings the
// same cluster back; `pause()` SIGSTOPs the postmaster and every backend (a primary that answers
// nothing, as a host frozen or behind a network black hole looks), `resume()` SIGCONTs them.

export type DisposablePrimary = {
  cluster: EmbeddedCluster;
  /** The migrated database's URL (the socket directory as host). */
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  pause(): void;
  resume(): void;
};

export async function disposablePrimary(t: Test): Promise<DisposablePrimary> {
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-outage-'));
  chmodSync(dir, 0o755); // as root the cluster runs as postgres, which must reach it
  const dataDir = path.join(dir, 'primary');
  const open = () => ensureEmbeddedCluster({ dataDir, durability: 'disposable' });
  let cluster = await open();
  await ensureDatabase(cluster.url('postgres'), 'chronomap_outage_test');
  const url = cluster.url('chronomap_outage_test');
  await migrate(url, loadMigrations());
  let frozen: FrozenCluster | undefined;
  const resume = () => {
    frozen?.thaw();
    frozen = undefined;
  };
  t.teardown(async () => {
    resume();
    await cluster.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get cluster() {
      return cluster;
    },
    url,
    stop: () => cluster.stop(),
    async start() {
      cluster = await open();
    },
    pause() {
      frozen = freezeCluster(dataDir);
    },
    resume,
  };
}

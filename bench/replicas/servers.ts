import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import {
  type EmbeddedCluster,
  ensureDatabase,
  ensureEmbeddedCluster,
} from '../../src/adapters/postgres/embedded-cluster.ts';
import { createStandby } from '../../test/helpers/replication.ts';
import { benchPolicyFile } from '../api-server.ts';

// The servers of the read-replica benchmark: a primary (an embedded cluster of its own under
// .data/bench-replicas, kept between runs because the 1M events take minutes to generate), a hot
// standby made from it by pg_basebackup at every run, each pinned to one core with taskset, and
// `bin/chronomap api` processes pointed at them.

export const BENCH_DIR = path.join(projectRoot, '.data', 'bench-replicas');
export const DATABASE = 'chronomap_bench';

export async function startPrimary(): Promise<EmbeddedCluster> {
  const primary = await ensureEmbeddedCluster({
    dataDir: path.join(BENCH_DIR, 'primary'),
    durability: 'disposable',
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await ensureDatabase(primary.url('postgres'), DATABASE);
  return primary;
}

/** A fresh standby (the previous run's is removed first: it may be far behind). */
export async function startStandby(primary: EmbeddedCluster, name: string): Promise<EmbeddedCluster> {
  const standbyDir = path.join(BENCH_DIR, name);
  if (existsSync(standbyDir)) {
    await stopCluster(standbyDir);
    rmSync(standbyDir, { recursive: true, force: true });
  }
  return createStandby(primary, standbyDir);
}

/** The same cluster started again (a stopped standby resumes streaming from where it was). */
export function restartCluster(cluster: EmbeddedCluster): Promise<EmbeddedCluster> {
  return ensureEmbeddedCluster({ dataDir: cluster.dataDir, durability: 'disposable' });
}

async function stopCluster(dataDir: string): Promise<void> {
  if (!existsSync(path.join(dataDir, 'postmaster.pid'))) return;
  const cluster = await ensureEmbeddedCluster({ dataDir, durability: 'disposable' });
  await cluster.stop();
}

/**
 * Pins a cluster's postmaster and every process it has started to one core; the backends it forks
 * later inherit the mask. (`taskset -a` covers every thread of a process.)
 */
export function pinCluster(cluster: EmbeddedCluster, cpu: number): number {
  const postmaster = Number(
    readFileSync(path.join(cluster.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  const pids = [postmaster, ...childrenOf(postmaster)];
  for (const pid of pids) {
    try {
      execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    } catch {
      // a backend that ended meanwhile
    }
  }
  return pids.length;
}

function childrenOf(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parent) children.push(Number(entry));
    } catch {
      // gone
    }
  }
  return children;
}

/** Resident memory of a process and its descendants, in bytes, each process listed. */
export function residentMemory(root: number): { pid: number; bytes: number }[] {
  const result: { pid: number; bytes: number }[] = [];
  const visit = (pid: number) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kilobytes = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      result.push({ pid, bytes: kilobytes * 1024 });
    } catch {
      return;
    }
    for (const child of childrenOf(pid)) visit(child);
  };
  visit(root);
  return result;
}

export type Api = { name: string; base: string; metrics: string; child: ChildProcess };

const apis = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const api of apis) api.kill('SIGTERM');
    process.exit(130);
  });
}

/**
 * `bin/chronomap api` on the primary, with the standby as its read replica when `replicaUrl` is
 * given. No answer cache (READ_CACHE_MB=0: every request is a cache miss) and no anonymous rate
 * limit windows (one IP fires thousands of requests; without windows no counter is written).
 */
export async function startApi(options: {
  name: string;
  primaryUrl: string;
  replicaUrl?: string;
  processes: number;
}): Promise<Api> {
  const child = spawn(path.join(projectRoot, 'bin', 'chronomap'), ['api'], {
    env: {
      ...process.env,
      DATABASE_URL: options.primaryUrl,
      ...(options.replicaUrl ? { DATABASE_READ_URLS: options.replicaUrl } : {}),
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      READ_CACHE_MB: '0',
      METRICS_BIND: '127.0.0.1:0',
      API_PROCESSES: String(options.processes),
      QUOTAS_CONFIG: benchPolicyFile(false),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  apis.add(child);
  child.on('exit', () => apis.delete(child));
  return new Promise<Api>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the API did not start:\n${seen}`)), 60_000);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const base = seen.match(/listening on (http:\/\/[^\s]+)/)?.[1];
      const metrics = seen.match(/metrics: (http:\/\/[^\s]+)/)?.[1];
      if (base && metrics) {
        clearTimeout(timer);
        resolve({ name: options.name, base, metrics, child });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`the API exited with ${code}:\n${seen}`)));
  });
}

/** chronomap_read_api_calls_total by target (primary, replica-1) from the API's METRICS_BIND. */
export async function readCalls(api: Api): Promise<Record<string, number>> {
  const text = await (await fetch(api.metrics)).text();
  const calls: Record<string, number> = {};
  for (const match of text.matchAll(/^chronomap_read_api_calls_total\{target="([^"]+)"\} (\S+)$/gm)) {
    calls[match[1] as string] = Number(match[2]);
  }
  return calls;
}

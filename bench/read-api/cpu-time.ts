import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';

// Where the CPU of a throughput run goes: the API processes, the PostgreSQL backends serving them
// and this process (autocannon runs in it). On a machine where all three share the cores, requests/s
// alone cannot tell a slower read path from a busier load generator; CPU milliseconds per request
// can. Linux only (/proc); elsewhere, and for a server whose processes this one cannot see (a
// container with its own process namespace), the figures are absent.

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux architecture Node supports

type Stat = { parent: number; cpuMs: number; command: string };

function readStat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command sits in parentheses and may itself contain spaces or parentheses.
    const close = text.lastIndexOf(')');
    const command = text.slice(text.indexOf('(') + 1, close);
    const fields = text.slice(close + 2).split(' ');
    // After the command: state, ppid, ..., utime (14th field of the line) and stime (15th).
    const parent = Number(fields[1]);
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { parent, cpuMs: (ticks * 1000) / TICKS_PER_SECOND, command };
  } catch {
    return null;
  }
}

/** CPU ms used so far by a process and all its descendants (an API process and its cluster workers). */
function treeCpuMs(root: number): number | null {
  const stats = new Map<number, Stat>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) stats.set(Number(entry), stat);
  }
  if (!stats.has(root)) return null;
  let total = 0;
  for (const [pid, stat] of stats) {
    for (let at: number | undefined = pid; at !== undefined && at > 1; at = stats.get(at)?.parent) {
      if (at === root) {
        total += stat.cpuMs;
        break;
      }
    }
  }
  return total;
}

/** CPU ms used so far by each PostgreSQL backend connected to the client's database (but the client's own). */
async function backendCpuMs(client: pg.Client): Promise<Map<number, number> | null> {
  const { rows } = await client.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  const result = new Map<number, number>();
  for (const { pid } of rows) {
    const stat = readStat(pid);
    // A pid of another process namespace may name an unrelated process here: only postgres counts.
    if (!stat || !/^postgres/.test(stat.command)) return null;
    result.set(pid, stat.cpuMs);
  }
  return result;
}

export type CpuSplit = { apiMs: number | null; databaseMs: number | null; benchMs: number };

/**
 * Starts counting; the returned function gives the CPU ms each side used since. Backends that
 * connected meanwhile count from zero; backends that disconnected meanwhile are missed (the API's
 * pool keeps idle connections for 30 s, longer than a run).
 */
export async function startCpuCount(apiPid: number, client: pg.Client): Promise<() => Promise<CpuSplit>> {
  const api = treeCpuMs(apiPid);
  const database = await backendCpuMs(client);
  const bench = process.cpuUsage();
  return async () => {
    const benchUsage = process.cpuUsage(bench);
    const apiAfter = treeCpuMs(apiPid);
    const databaseAfter = await backendCpuMs(client);
    let databaseMs: number | null = null;
    if (database && databaseAfter) {
      databaseMs = 0;
      for (const [pid, ms] of databaseAfter) databaseMs += ms - (database.get(pid) ?? 0);
    }
    return {
      apiMs: api !== null && apiAfter !== null ? apiAfter - api : null,
      databaseMs,
      benchMs: (benchUsage.user + benchUsage.system) / 1000,
    };
  };
}

/** "CPU ms per request: API 0.61, PostgreSQL 0.52, bench 0.20 (1.9 cores busy)". */
export function describeCpu(split: CpuSplit, requests: number, seconds: number): string {
  const perRequest = (ms: number | null) => (ms === null ? 'n/a' : (ms / Math.max(1, requests)).toFixed(2));
  const busy = [split.apiMs, split.databaseMs, split.benchMs].reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
  return (
    `CPU ms per request: API ${perRequest(split.apiMs)}, PostgreSQL ${perRequest(split.databaseMs)}, ` +
    `bench ${perRequest(split.benchMs)} (${(busy / 1000 / seconds).toFixed(2)} cores busy)`
  );
}

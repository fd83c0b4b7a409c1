// Read replicas on the 1M-event data set (docs/performance.md, "Read replicas"): /api/v1/events
// cache-miss throughput at 50 connections with the primary alone and with hot standbys (one, or
// two with --replicas 2), alternated in the same run (A B B A ...), then a standby stopped in the
// middle of a load (failed requests, p99 around the stop) and started again (used again).
//
//   node bench/replicas/run.ts [--rounds 2] [--duration 15] [--connections 50] [--processes 2]
//                              [--failover-duration 24] [--replicas 1]
//
// The cores: the primary's PostgreSQL is pinned to CPU 0 and the standby's to CPU 1 (taskset), so
// the database tier has one core alone and two cores with the replica (with --replicas 2 the
// second standby shares CPU 0 with the primary, so that the reads, which the router sends to the
// standbys only, are spread over both cores); the API processes and this
// load generator are not pinned and share both cores with them. The data: the primary is an
// embedded cluster of its own under .data/bench-replicas (kept between runs); when its database is
// empty the run generates the 1M events with bench/read-api/generate.ts first (about 4 minutes).

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import type { EmbeddedCluster } from '../../src/adapters/postgres/embedded-cluster.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { scalar } from '../../test/helpers/replication.ts';
import { withClient } from '../read-api/bench-database.ts';
import { eventsQuestions } from './questions.ts';
import {
  type Api,
  DATABASE,
  pinCluster,
  readCalls,
  restartCluster,
  residentMemory,
  startApi,
  startPrimary,
  startStandby,
} from './servers.ts';

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '50' },
    processes: { type: 'string', default: '2' },
    'failover-duration': { type: 'string', default: '24' },
    replicas: { type: 'string', default: '1' },
  },
});
const DURATION = Number(options.duration);
const CONNECTIONS = Number(options.connections);
const log = (line: string) => process.stderr.write(`${line}\n`);
const loadAverage = () =>
  os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');

type Load = {
  result: Awaited<ReturnType<typeof autocannon>>;
  /** [ms since the load started, latency ms] of every 200 answer. */
  samples: [number, number][];
};

async function load(api: Api, paths: string[], duration: number, during?: () => void): Promise<Load> {
  let next = 0;
  const started = performance.now();
  const samples: [number, number][] = [];
  const running = autocannon({
    url: api.base,
    connections: CONNECTIONS,
    duration,
    requests: [
      {
        setupRequest: (request, context) => {
          context.sentAt = performance.now();
          next = (next + 1) % paths.length;
          return { ...request, path: paths[next] };
        },
        onResponse: (status, _body, context) => {
          const now = performance.now();
          if (status === 200) samples.push([now - started, now - (context.sentAt ?? now)]);
        },
      },
    ],
  });
  during?.();
  return { result: await running, samples };
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? NaN;
}

const commits = (url: string) =>
  scalar(url, `select xact_commit from pg_stat_database where datname = '${DATABASE}'`).then(Number);

async function main(): Promise<void> {
  const primary = await startPrimary();
  const primaryUrl = primary.url(DATABASE);
  await migrate(primaryUrl, loadMigrations(), log);
  let total = Number(await scalar(primaryUrl, 'select count(*) from events'));
  if (total === 0) {
    log('the benchmark primary is empty: generating 1M events (bench/read-api/generate.ts)');
    execFileSync(process.execPath, [path.join(projectRoot, 'bench/read-api/generate.ts')], {
      env: { ...process.env, BENCH_DATABASE_URL: primaryUrl },
      stdio: 'inherit',
    });
    total = Number(await scalar(primaryUrl, 'select count(*) from events'));
  }
  const sizes = await withClient(primaryUrl, async (client) => {
    const { rows } = await client.query(
      `select pg_database_size(current_database()) as database,
              pg_total_relation_size('events') as events, pg_relation_size('events') as heap`,
    );
    return rows[0] as { database: string; events: string; heap: string };
  });
  const catalogs = (await withClient(primaryUrl, (c) => c.query('select slug from catalogs'))).rows.map(
    (r) => r.slug as string,
  );
  const datasets = (await withClient(primaryUrl, (c) => c.query('select slug from datasets'))).rows.map(
    (r) => r.slug as string,
  );

  // standby-1 on CPU 1; a second one (--replicas 2) on CPU 0 beside the primary.
  const standbys = [];
  for (let i = 0; i < Number(options.replicas); i++) {
    const made = await startStandby(primary, `standby-${i + 1}`);
    log(`standby-${i + 1} on CPU ${(i + 1) % 2} (${pinCluster(made, (i + 1) % 2)} processes)`);
    standbys.push(made);
  }
  let standby = standbys[0] as EmbeddedCluster;
  const standbyUrls = standbys.map((cluster) => cluster.url(DATABASE));
  log(`${total} events; primary on CPU 0 (${pinCluster(primary, 0)} processes)`);
  const allCommits = async () => Promise.all([primaryUrl, ...standbyUrls].map(commits));
  const processes = Number(options.processes);
  const single = await startApi({ name: 'primary only', primaryUrl, processes });
  const replicated = await startApi({
    name: `with ${standbys.length} replica(s)`,
    primaryUrl,
    replicaUrl: standbyUrls.join(','),
    processes,
  });
  const health = await (await fetch(`${replicated.base}/api/health`)).json();
  log(`/api/health with the replica: ${JSON.stringify(health)}`);

  const paths = eventsQuestions(catalogs, datasets, 20_000);
  for (const api of [single, replicated]) await load(api, paths, 3); // warm both the same way
  const phases: Record<string, unknown>[] = [];
  const order = [single, replicated, replicated, single];
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const api of order.slice((round % 2) * 2, (round % 2) * 2 + 2).concat()) {
      const before = await allCommits();
      const calls = await readCalls(api);
      const loadBefore = loadAverage();
      const { result } = await load(api, paths, DURATION);
      const after = await allCommits();
      const callsAfter = await readCalls(api);
      const rss = residentMemory(api.child.pid as number);
      const phase = {
        round: round + 1,
        api: api.name,
        requestsPerSecond: Math.round(result.requests.total / DURATION),
        p50: result.latency.p50,
        p99: result.latency.p99,
        failed: result.non2xx + result.errors,
        primaryCommits: (after[0] ?? 0) - (before[0] ?? 0),
        standbyCommits: after.slice(1).map((n, i) => n - (before[i + 1] ?? 0)),
        readCalls: Object.fromEntries(
          Object.entries(callsAfter).map(([target, n]) => [target, n - (calls[target] ?? 0)]),
        ),
        rssMb: rss.map((p) => Math.round(p.bytes / 1048576)),
        loadAverage: `${loadBefore} -> ${loadAverage()}`,
      };
      phases.push(phase);
      log(JSON.stringify(phase));
    }
  }

  // Failover: the standby stopped a third of the way into a load, started again at two thirds.
  const failoverSeconds = Number(options['failover-duration']);
  const marks: Record<string, number> = {};
  const callsBefore = await readCalls(replicated);
  let callsAtRestart: Record<string, number> = {};
  const started = performance.now();
  const failover = await load(replicated, paths, failoverSeconds, () => {
    setTimeout(
      async () => {
        marks.stopAsked = performance.now() - started;
        await standby.stop();
        marks.stopped = performance.now() - started;
      },
      (failoverSeconds * 1000) / 3,
    );
    setTimeout(
      async () => {
        marks.restartAsked = performance.now() - started;
        standby = await restartCluster(standby);
        pinCluster(standby, 1);
        marks.restarted = performance.now() - started;
        callsAtRestart = await readCalls(replicated);
      },
      (failoverSeconds * 2000) / 3,
    );
  });
  const callsAfter = await readCalls(replicated);
  const window = (from: number, to: number) =>
    failover.samples.filter(([at]) => at >= from && at < to).map(([, latency]) => latency);
  const aroundStop = window((marks.stopAsked ?? 0) - 500, (marks.stopped ?? 0) + 2000);
  const steady = window(1000, (marks.stopAsked ?? 0) - 500);
  const failoverFigures = {
    failed: failover.result.non2xx + failover.result.errors,
    requests: failover.result.requests.total,
    marksMs: Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, Math.round(v)])),
    p99BeforeStop: percentile(steady, 0.99),
    p99AroundStop: percentile(aroundStop, 0.99),
    maxAroundStop: Math.max(...aroundStop),
    p99Overall: failover.result.latency.p99,
    replicaCallsUntilRestart: (callsAtRestart['replica-1'] ?? 0) - (callsBefore['replica-1'] ?? 0),
    replicaCallsAfterRestart: (callsAfter['replica-1'] ?? 0) - (callsAtRestart['replica-1'] ?? 0),
    primaryCallsUntilRestart: (callsAtRestart.primary ?? 0) - (callsBefore.primary ?? 0),
    loadAverage: loadAverage(),
  };
  log(`failover: ${JSON.stringify(failoverFigures)}`);
  const replicaHealth = await (await fetch(`${replicated.base}/api/health`)).json();

  for (const api of [single, replicated]) api.child.kill('SIGTERM');
  await Promise.all([standby, ...standbys.slice(1)].map((cluster) => cluster.stop()));
  const report = {
    at: new Date().toISOString(),
    cpus: os.cpus().length,
    events: total,
    sizes,
    connections: CONNECTIONS,
    duration: DURATION,
    apiProcesses: processes,
    replicas: standbys.length,
    health,
    phases,
    failover: failoverFigures,
    healthAfterRestart: replicaHealth,
  };
  mkdirSync(path.join(projectRoot, 'bench', 'results'), { recursive: true });
  const file = path.join(projectRoot, 'bench', 'results', `replicas-${Date.now()}.json`);
  writeFileSync(file, JSON.stringify(report, null, 2));
  log(`written to ${file}`);
  process.exit(0);
}

await main();

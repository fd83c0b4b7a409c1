// Requests/s per route family of /api/v1 on the 1M-event benchmark primary of bench/replicas
// (docs/scaling.md, "Single-node limits"): /events, /events/geo, /events/temporal, /events/stats
// and vector tiles, each for --duration seconds at 50 connections with every request a different
// question, then GET / (no database) as the reference of what the machine gives Node meanwhile.
// One API with its default processes, no answer cache, no anonymous rate-limit windows.
//
//   node bench/replicas/route-families.ts [--duration 10] [--connections 50]

import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { scalar } from '../../test/helpers/replication.ts';
import { withClient } from '../read-api/bench-database.ts';
import { eventsQuestions, familyQuestions } from './questions.ts';
import { DATABASE, startApi, startPrimary } from './servers.ts';

const { values: options } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
  },
});
const loadAverage = () =>
  os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const primary = await startPrimary();
  const url = primary.url(DATABASE);
  const total = Number(await scalar(url, 'select count(*) from events'));
  if (total === 0) throw new Error('the benchmark primary is empty: run bench/replicas/run.ts first');
  const slugs = async (table: string) =>
    (await withClient(url, (c) => c.query(`select slug from ${table}`))).rows.map((r) => r.slug as string);
  const catalogs = await slugs('catalogs');
  const families: Record<string, string[]> = {
    events: eventsQuestions(catalogs, await slugs('datasets'), 20_000),
    ...familyQuestions(catalogs, 20_000),
    'GET / (no database)': ['/'],
  };
  const api = await startApi({ name: 'families', primaryUrl: url, processes: 2 });
  process.stderr.write(`${total} events; API at ${api.base}; load average ${loadAverage()}\n`);
  console.log('| family | requests/s | p50 ms | p99 ms | failed | answers | load average |');
  console.log('| --- | ---: | ---: | ---: | ---: | --- | --- |');
  for (const [family, paths] of Object.entries(families)) {
    let next = 0;
    const statuses = new Map<number, number>();
    const before = loadAverage();
    const result = await autocannon({
      url: api.base,
      connections: Number(options.connections),
      duration: Number(options.duration),
      requests: [
        {
          setupRequest: (request) => {
            next = (next + 1) % paths.length;
            return { ...request, path: paths[next] };
          },
          onResponse: (status) => void statuses.set(status, (statuses.get(status) ?? 0) + 1),
        },
      ],
    });
    const answers = [...statuses].map(([status, n]) => `${n}× ${status}`).join(', ');
    const failed = result.errors + [...statuses].filter(([s]) => s >= 500).reduce((sum, [, n]) => sum + n, 0);
    console.log(
      `| ${family} | ${Math.round(result.requests.total / Number(options.duration))} | ${result.latency.p50} | ${result.latency.p99} | ${failed} | ${answers} | ${before} -> ${loadAverage()} |`,
    );
  }
  api.child.kill('SIGTERM');
  process.exit(0);
}

await main();

// The cost of OGC API – Features over /api/v1: a page of a collection's items (/ogc, GeoJSON built
// in Node from the read model's page) against the same page of /api/v1/events (the database's JSON
// text passed on), in the same run, at the same concurrency, on one API process.
//
//   DATABASE_URL=postgres://... node bench/ogc/run.ts --dataset usgs-earthquakes [--duration 10] [--connections 50]
//
// The database needs events (e.g. `bin/chronomap seed-demo`, or bench/read-api's generated one).
// The anonymous rate limit is lifted for the run (one IP fires thousands of requests).

import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchPolicyFile, startChronomapApi } from '../api-server.ts';

const { values: options } = parseArgs({
  options: {
    dataset: { type: 'string', default: 'usgs-earthquakes' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('set DATABASE_URL to a Chronomap database with events');

// One API process, the anonymous rate limit lifted (bench/api-server.ts).
const { base, child } = await startChronomapApi({
  API_PROCESSES: '1',
  QUOTAS_CONFIG: benchPolicyFile(false),
});

const dataset = encodeURIComponent(options.dataset);
const box = encodeURIComponent(JSON.stringify({ west: -180, south: -60, east: 0, north: 60 }));
const cases = [
  ['/api/v1/events, page of 100 by id', `/api/v1/events?datasets=${dataset}&limit=100&sort=id`],
  ['/ogc items, page of 100', `/ogc/collections/${dataset}/items?limit=100`],
  [
    '/api/v1/events, box + dates, page of 100',
    `/api/v1/events?datasets=${dataset}&limit=100&sort=id&bounds=${box}&startDate=2000-01-01&endDate=2100-01-01`,
  ],
  [
    '/ogc items, bbox + datetime, page of 100',
    `/ogc/collections/${dataset}/items?limit=100&bbox=-180,-60,0,60&datetime=2000-01-01/2100-01-01`,
  ],
] as const;

console.log(`| request | requests/s | p50 ms | p99 ms |`);
console.log(`| --- | --- | --- | --- |`);
try {
  for (const [name, url] of cases) {
    const check = await fetch(`${base}${url}`);
    if (check.status !== 200) throw new Error(`${url}: ${check.status} ${await check.text()}`);
    const result = await autocannon({
      url: `${base}${url}`,
      connections: Number(options.connections),
      duration: Number(options.duration),
    });
    if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} answers other than 2xx`);
    console.log(
      `| ${name} | ${Math.round(result.requests.average)} | ${result.latency.p50} | ${result.latency.p99} |`,
    );
  }
} finally {
  child.kill('SIGTERM');
}

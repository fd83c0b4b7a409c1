// Measures the exports of the whole benchmark set (bench/read-api/generate.ts: 1M events) as GeoJSON,
// CSV, GeoJSON text sequences, KML, GeoPackage, FlatGeobuf, GeoParquet and PMTiles (the view's tiles, zooms 0-12) through the API (GET /api/v1/events.<format>, one API process;
// round 1 exports afresh, round 2 reads the files kept by round 1), with the server's
// RSS sampled every 50 ms, and in the same run the physical limit: `psql \copy (select ...) to stdout`
// of the same rows in the same order (PostgreSQL's own COPY, no HTTP, no JSON). Prints one table;
// writes the figures as JSON to bench/results/.
//
//   BENCH_DATABASE_URL=postgres://.../readmodel_bench_x node bench/export/run.ts [--repeat 2] [--gzip]
//     [--gzip-first] [--formats geojson,csv]

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import pg from 'pg';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { benchPolicyFile, startChronomapApi } from '../api-server.ts';
import { benchDatabaseUrl } from '../read-api/bench-database.ts';

const { values: options } = parseArgs({
  options: {
    repeat: { type: 'string', default: '2' },
    gzip: { type: 'boolean', default: false },
    // A comma-separated subset (e.g. geojson,csv): the compression step only concerns the text formats.
    // Round 1's gzip download before the identity one, so that the gzip export is the fresh one.
    'gzip-first': { type: 'boolean', default: false },
    formats: { type: 'string', default: 'geojson,csv,geojsonseq,kml,gpkg,fgb,parquet,pmtiles' },
  },
});

type Row = {
  what: string;
  seconds: number;
  eventsPerSecond: number;
  megabytes: number;
  rssGrowthMb?: number;
};

/** Resident memory of a process and its descendants (an API process and its cluster worker), in KB. */
function treeRssKb(root: number): number {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  for (const pid of parents.keys()) {
    let cursor: number | undefined = pid;
    while (cursor !== undefined && cursor !== root && cursor > 1) cursor = parents.get(cursor);
    if (cursor !== root) continue;
    try {
      const match = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
      total += Number(match?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

async function startApi(databaseUrl: string): Promise<{ base: string; pid: number; stop: () => void }> {
  const { base, child } = await startChronomapApi({
    DATABASE_URL: databaseUrl,
    API_PROCESSES: '1',
    QUOTAS_CONFIG: benchPolicyFile(false),
    // A directory of its own: round 1 exports afresh (and keeps the files), round 2 reads them.
    EXPORT_CACHE_DIR: mkdtempSync(path.join(os.tmpdir(), 'chronomap-bench-exports-')),
    // The whole set's tile pyramid, however many tiles it takes (the default cap is 20,000).
    EXPORT_PMTILES_MAX_TILES: '1000000',
  });
  return { base, pid: child.pid ?? 0, stop: () => child.kill('SIGTERM') };
}

/** GETs a URL to the end, counting bytes (inflated when gzip), with the server's peak RSS growth. */
async function download(
  url: string,
  serverPid: number,
  gzip: boolean,
): Promise<{ seconds: number; bytes: number; rssGrowthMb: number; status: number }> {
  const before = treeRssKb(serverPid);
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRssKb(serverPid));
  }, 50);
  const started = performance.now();
  try {
    const { status, bytes } = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
      const request = http.get(url, { headers: gzip ? { 'accept-encoding': 'gzip' } : {} }, (response) => {
        let bytes = 0;
        const body = gzip ? response.pipe(createGunzip()) : response;
        body.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        body.on('end', () => resolve({ status: response.statusCode ?? 0, bytes }));
        body.on('error', reject);
      });
      request.on('error', reject);
    });
    return {
      seconds: (performance.now() - started) / 1000,
      bytes,
      rssGrowthMb: (peak - before) / 1024,
      status,
    };
  } finally {
    clearInterval(sampler);
  }
}

/** The same rows in the same order (id, the exports' default) through COPY: what PostgreSQL alone takes to hand them out. */
function psqlCopy(databaseUrl: string): { seconds: number; bytes: number } {
  const select =
    'select e.id, e.event_timestamp, d.slug, c.slug, st_x(e.location), st_y(e.location), e.data ' +
    'from events e join datasets d on d.id = e.dataset_id join catalogs c on c.id = e.catalog_id ' +
    'order by e.id';
  const started = performance.now();
  const result = spawnSync('psql', [databaseUrl, '-X', '-q', '-c', `\\copy (${select}) to stdout with csv`], {
    maxBuffer: 4 * 1024 * 1024 * 1024,
  });
  if (result.status !== 0) throw new Error(`psql failed: ${result.stderr.toString()}`);
  return { seconds: (performance.now() - started) / 1000, bytes: result.stdout.length };
}

async function main(): Promise<void> {
  const databaseUrl = await benchDatabaseUrl();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const total = Number((await client.query('select count(*) as n from events')).rows[0].n);
  const warmUpDataset = (await client.query('select slug from datasets order by id limit 1')).rows[0]
    .slug as string;
  await client.end();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const api = await startApi(databaseUrl);
  log(
    `${total} events; API at ${api.base} (pid ${api.pid}); load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  const rows: Row[] = [];
  try {
    // Unmeasured: the first export of a fresh process grows its heap to its working size (about
    // 100 MB more RSS once, then none); one dataset is enough for that.
    await download(`${api.base}/api/v1/events.geojson?datasets=${warmUpDataset}`, api.pid, false);
    const repeat = Number(options.repeat);
    for (let round = 1; round <= repeat; round += 1) {
      for (const format of options.formats.split(',')) {
        const codings = options.gzip ? [false, true] : [false];
        if (options['gzip-first']) codings.reverse();
        for (const gzip of codings) {
          const run = await download(`${api.base}/api/v1/events.${format}`, api.pid, gzip);
          if (run.status !== 200) throw new Error(`${format}: HTTP ${run.status}`);
          // Round 1 exports and keeps each file; later rounds read the kept file (docs/api-v1.md, "Exports").
          // Only the first download of a format in round 1 exports afresh: the next reads the file it kept.
          const fresh = round === 1 && gzip === codings[0];
          const what = `${format}${gzip ? ' gzip' : ''} (round ${round}${fresh ? ', fresh' : ', kept file'})`;
          rows.push({
            what,
            seconds: run.seconds,
            eventsPerSecond: total / run.seconds,
            megabytes: run.bytes / 1e6,
            rssGrowthMb: run.rssGrowthMb,
          });
          log(
            `${what}: ${run.seconds.toFixed(2)} s, ${Math.round(total / run.seconds)} events/s, RSS +${run.rssGrowthMb.toFixed(1)} MB`,
          );
        }
      }
      const copy = psqlCopy(databaseUrl);
      rows.push({
        what: `psql \\copy csv (round ${round})`,
        seconds: copy.seconds,
        eventsPerSecond: total / copy.seconds,
        megabytes: copy.bytes / 1e6,
      });
      log(`psql \\copy: ${copy.seconds.toFixed(2)} s`);
    }
  } finally {
    api.stop();
  }
  const table = [
    '| export | s | events/s | MB | server RSS growth |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (row) =>
        `| ${row.what} | ${row.seconds.toFixed(2)} | ${Math.round(row.eventsPerSecond).toLocaleString('en')} | ${row.megabytes.toFixed(0)} | ${row.rssGrowthMb === undefined ? '' : `${row.rssGrowthMb.toFixed(1)} MB`} |`,
    ),
  ].join('\n');
  process.stdout.write(`${table}\n`);
  const results = path.join(projectRoot, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  writeFileSync(
    path.join(results, `export-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
    `${JSON.stringify({ total, cpus: os.cpus().length, rows }, null, 2)}\n`,
  );
}

await main();

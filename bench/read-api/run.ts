// Measures the /api/v1 read endpoints on the benchmark database (bench/read-api/generate.ts) and,
// in the same run, the baselines: the naive SQL a simple implementation runs per request
// (ST_SnapToGrid + GROUP BY for clusters, date_bin + GROUP BY for the histogram) and supercluster
// (index build and query time on the same points). Prints one table; writes the figures as JSON to
// bench/results/.
//
//   node bench/read-api/run.ts [--requests 40] [--duration 10] [--connections 50] [--skip-baselines]
//                              [--skip-throughput] [--only /events/geo,/events/temporal] [--processes N]
//
// --processes sets API_PROCESSES for the API started (default: the service's, one per core up to 4).
// --only measures the listed endpoints only (the 10M run: the naive baselines alone would take an
// hour there); the requests asked are the same as in a full run (same seed, same order).

import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import Supercluster from 'supercluster';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { seededRandom } from '../../test/helpers/v1-fixture.ts';
import { benchPolicyFile, startChronomapApi } from '../api-server.ts';
import { benchDatabaseUrl } from './bench-database.ts';
import { CITIES } from './cities.ts';
import { describeCpu, startCpuCount } from './cpu-time.ts';
import {
  type Bounds,
  loadAverage,
  time,
  measureUrls,
  naiveClusterQuery,
  percentile,
  report,
  type Row,
  url,
  viewport,
} from './measure.ts';

const { values: options } = parseArgs({
  options: {
    requests: { type: 'string', default: '40' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'skip-baselines': { type: 'boolean', default: false },
    'skip-throughput': { type: 'boolean', default: false },
    only: { type: 'string' },
    processes: { type: 'string' },
  },
});
const REQUESTS = Number(options.requests);

// Seeded, so that every run asks the same questions.
const random = seededRandom(7);
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;

function cityView(zoom: number): Bounds {
  const [, lon, lat] = pick(CITIES);
  return viewport(zoom, lon, lat);
}

/** A random one-year window with times of day, so that partial days and months are exercised. */
function yearWindow(): { startDate: string; endDate: string } {
  const start = Date.parse('2016-01-01T00:00:00Z') + Math.floor(random() * 9 * 365 * 86_400_000);
  return {
    startDate: new Date(start).toISOString(),
    endDate: new Date(start + 365 * 86_400_000 + Math.floor(random() * 86_400_000)).toISOString(),
  };
}

/** The API processes started; an interrupted run (Ctrl-C, kill) takes them along. */
const servers = new Set<ChildProcess>();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const server of servers) server.kill('SIGTERM');
    process.exit(130);
  });
}

async function startServer(
  databaseUrl: string,
  counting: boolean,
): Promise<{ base: string; child: ChildProcess; processes: number }> {
  const started = await startChronomapApi({
    DATABASE_URL: databaseUrl,
    QUOTAS_CONFIG: benchPolicyFile(counting),
    ...(options.processes ? { API_PROCESSES: options.processes } : {}),
  });
  servers.add(started.child);
  started.child.on('exit', () => servers.delete(started.child));
  return started;
}

async function main(): Promise<void> {
  const databaseUrl = await benchDatabaseUrl();
  // The data may have been generated before the latest migrations (indexes the reader relies on).
  await migrate(databaseUrl, loadMigrations(), (line) => process.stdout.write(`${line}\n`));
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const total = Number((await client.query('select count(*) as n from events')).rows[0].n);
  if (total === 0) throw new Error('the benchmark database is empty: run bench/read-api/generate.ts first');
  const catalogs = (await client.query('select slug from catalogs order by id')).rows.map(
    (r) => r.slug as string,
  );
  const datasets = (await client.query('select slug from datasets order by id')).rows.map(
    (r) => r.slug as string,
  );
  const { base, child, processes } = await startServer(databaseUrl, true);
  const rows: Row[] = [];
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(`${total} events; API at ${base}; load average ${loadAverage()}`);

  const only = options.only?.split(',').map((item) => item.trim());
  const scenario = async (endpoint: string, name: string, urls: string[], target?: string) => {
    if (only && !only.includes(endpoint)) return { endpoint, scenario: name, runs: 0, p50: 0, p95: 0 };
    const samples = await measureUrls(urls);
    const row: Row = {
      endpoint,
      scenario: name,
      runs: samples.length,
      p50: percentile(samples, 0.5),
      p95: percentile(samples, 0.95),
      ...(target ? { target } : {}),
    };
    rows.push(row);
    log(
      `${endpoint} ${name}: p50 ${row.p50.toFixed(1)} ms, p95 ${row.p95.toFixed(1)} ms; load ${loadAverage()}`,
    );
    return row;
  };
  const times = <T>(make: () => T): T[] => Array.from({ length: REQUESTS }, make);

  try {
    // /events
    await scenario(
      '/events',
      'first page, no filter',
      times(() => url(base, '/api/v1/events', {})),
      'p50 <= 15',
    );
    await scenario(
      '/events',
      'first page, catalog + 1-year window',
      times(() => url(base, '/api/v1/events', { catalog: pick(catalogs), ...yearWindow() })),
      'p50 <= 15',
    );
    await scenario(
      '/events',
      'first page, city bounds (zoom 10) + datasets',
      times(() =>
        url(base, '/api/v1/events', { bounds: cityView(10), datasets: [pick(datasets), pick(datasets)] }),
      ),
      'p50 <= 15',
    );
    await scenario(
      '/events',
      'page 5, sort -data.value, catalog',
      times(() => url(base, '/api/v1/events', { catalog: pick(catalogs), sort: '-data.value', page: 5 })),
    );

    // /events/geo at every zoom, with and without a date filter
    const geoRows = new Map<string, Row>();
    for (const zoom of [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]) {
      for (const dated of [false, true]) {
        const name = `zoom ${zoom}${dated ? ' + 1-year window' : ''}`;
        const row = await scenario(
          '/events/geo',
          name,
          times(() =>
            url(base, '/api/v1/events/geo', { bounds: cityView(zoom), zoom, ...(dated ? yearWindow() : {}) }),
          ),
          'p50 <= 50, p95 <= 150',
        );
        geoRows.set(name, row);
      }
    }
    // A whole catalog's map, undated (its all-time cells, migration 0963) and with a window.
    for (const zoom of [4, 6]) {
      for (const dated of [false, true]) {
        await scenario(
          '/events/geo',
          `zoom ${zoom}, catalog${dated ? ' + 1-year window' : ''}`,
          times(() =>
            url(base, '/api/v1/events/geo', {
              bounds: cityView(zoom),
              zoom,
              catalog: pick(catalogs),
              ...(dated ? yearWindow() : {}),
            }),
          ),
          'p50 <= 50, p95 <= 150',
        );
      }
    }

    // /events/temporal
    const temporalNoFilter = await scenario(
      '/events/temporal',
      'no filter',
      times(() => url(base, '/api/v1/events/temporal', {})),
      'p50 <= 50',
    );
    const temporalCatalog = await scenario(
      '/events/temporal',
      'catalog',
      times(() => url(base, '/api/v1/events/temporal', { catalog: pick(catalogs) })),
      'p50 <= 50',
    );
    await scenario(
      '/events/temporal',
      'dataset + 1-year window',
      times(() => url(base, '/api/v1/events/temporal', { datasets: pick(datasets), ...yearWindow() })),
      'p50 <= 50',
    );
    await scenario(
      '/events/temporal',
      'city bounds (zoom 8)',
      times(() => url(base, '/api/v1/events/temporal', { bounds: cityView(8) })),
      'p50 <= 50',
    );
    await scenario(
      '/events/temporal',
      'granularity=month, catalog',
      times(() => url(base, '/api/v1/events/temporal', { granularity: 'month', catalog: pick(catalogs) })),
      'p50 <= 50',
    );
    // What the Explore page sends at world zoom: bounds around the world, about 100 buckets.
    const explore = { targetBuckets: 100, minBuckets: 50, maxBuckets: 200 };
    await scenario(
      '/events/temporal',
      'world bounds, 100 buckets (Explore)',
      times(() =>
        url(base, '/api/v1/events/temporal', {
          bounds: { north: 85.05113, south: -85.05113, east: 180, west: -180 },
          ...explore,
        }),
      ),
      'p50 <= 50',
    );
    await scenario(
      '/events/temporal',
      'city bounds (zoom 8), granularity=month',
      times(() => url(base, '/api/v1/events/temporal', { bounds: cityView(8), granularity: 'month' })),
      'p50 <= 50',
    );
    // A catalog's view of a box has no day cells: its histogram is read from the box's rows.
    await scenario(
      '/events/temporal',
      'catalog + city bounds (zoom 8)',
      times(() => url(base, '/api/v1/events/temporal', { bounds: cityView(8), catalog: pick(catalogs) })),
      'p50 <= 50',
    );
    // The Explore page's first view is most of the world but not all of it.
    await scenario(
      '/events/temporal',
      'bounds west -170 east 170, 100 buckets (Explore)',
      times(() =>
        url(base, '/api/v1/events/temporal', {
          bounds: { north: 80, south: -60, east: 170, west: -170 },
          ...explore,
        }),
      ),
      'p50 <= 50',
    );

    // /events/stats and the rest
    await scenario(
      '/events/stats',
      'groupBy=dataset, no filter',
      times(() => url(base, '/api/v1/events/stats', { groupBy: 'dataset' })),
      'p50 <= 50',
    );
    await scenario(
      '/events/stats',
      'groupBy=catalog, 1-year window',
      times(() => url(base, '/api/v1/events/stats', { groupBy: 'catalog', ...yearWindow() })),
      'p50 <= 50',
    );
    await scenario(
      '/events/stats',
      'groupBy=dataset, bounds (zoom 5)',
      times(() => url(base, '/api/v1/events/stats', { groupBy: 'dataset', bounds: cityView(5) })),
      'p50 <= 50',
    );
    await scenario(
      '/events/geo/stats',
      'zoom 2-12, bounds',
      times(() => {
        const zoom = 2 + Math.floor(random() * 11);
        return url(base, '/api/v1/events/geo/stats', { zoom, bounds: cityView(zoom) });
      }),
    );
    await scenario(
      '/events/bounds',
      'catalog',
      times(() => url(base, '/api/v1/events/bounds', { catalog: pick(catalogs) })),
    );
    await scenario(
      '/events/bounds',
      'no filter',
      times(() => url(base, '/api/v1/events/bounds', {})),
    );
    await scenario(
      '/sources/stats',
      '-',
      times(() => url(base, '/api/v1/sources/stats', {})),
    );
    await scenario(
      '/data-sources',
      '-',
      times(() => url(base, '/api/v1/data-sources', {})),
    );

    // Baselines
    if (!options['skip-baselines']) {
      const naiveRuns = Math.max(3, Math.round(REQUESTS / 8));
      for (const zoom of [0, 2, 4, 6]) {
        for (const dated of [false, true]) {
          const samples: number[] = [];
          for (let i = 0; i < naiveRuns; i++) {
            const bounds = cityView(zoom);
            const window = dated ? yearWindow() : null;
            const query = naiveClusterQuery(bounds, zoom, window);
            samples.push(await time(() => client.query(query.text, query.values)));
          }
          const name = `zoom ${zoom}${dated ? ' + 1-year window' : ''}`;
          const row = geoRows.get(name);
          if (row) row.baseline = { name: 'naive ST_SnapToGrid', p50: percentile(samples, 0.5) };
          log(`naive clusters ${name}: p50 ${percentile(samples, 0.5).toFixed(1)} ms`);
        }
      }
      for (const [row, catalog] of [
        [temporalNoFilter, null],
        [temporalCatalog, pick(catalogs)],
      ] as const) {
        const samples: number[] = [];
        for (let i = 0; i < naiveRuns; i++) {
          samples.push(
            await time(() =>
              client.query(
                `select date_bin(interval '90 days', event_timestamp, timestamptz '2016-01-01') as bucket, count(*) as count
                 from events ${catalog ? 'where catalog_id = (select id from catalogs where slug = $1)' : ''}
                 group by 1 order by 1`,
                catalog ? [catalog] : [],
              ),
            ),
          );
        }
        row.baseline = { name: 'naive date_bin', p50: percentile(samples, 0.5) };
        log(`naive histogram ${row.scenario}: p50 ${percentile(samples, 0.5).toFixed(1)} ms`);
      }

      // supercluster: the same located points, no filters (every filter change means a rebuild).
      const points = await client.query(
        'select st_x(location) as lon, st_y(location) as lat from events where location is not null',
      );
      const features = points.rows.map((point) => ({
        type: 'Feature' as const,
        properties: {},
        geometry: { type: 'Point' as const, coordinates: [point.lon as number, point.lat as number] },
      }));
      let index: Supercluster | undefined;
      const build = await time(async () => {
        index = new Supercluster({ radius: 60, maxZoom: 16 }).load(features);
      });
      rows.push({
        endpoint: 'supercluster',
        scenario: `index build, ${features.length} points`,
        runs: 1,
        p50: build,
        p95: build,
        note: 'in process, no filters; a filter change needs a rebuild',
      });
      log(`supercluster build: ${build.toFixed(0)} ms`);
      for (const zoom of [0, 4, 8, 12, 16]) {
        const samples: number[] = [];
        for (let i = 0; i < REQUESTS; i++) {
          const bounds = cityView(zoom);
          samples.push(
            await time(async () => {
              if (bounds.west <= bounds.east)
                index?.getClusters([bounds.west, bounds.south, bounds.east, bounds.north], zoom);
              else {
                index?.getClusters([bounds.west, bounds.south, 180, bounds.north], zoom);
                index?.getClusters([-180, bounds.south, bounds.east, bounds.north], zoom);
              }
            }),
          );
        }
        rows.push({
          endpoint: 'supercluster',
          scenario: `getClusters zoom ${zoom}`,
          runs: samples.length,
          p50: percentile(samples, 0.5),
          p95: percentile(samples, 0.95),
          note: 'in process, no HTTP, no filters',
        });
      }
    }

    // Throughput: as deployed (every request also upserts its rate-limit counters), then the read
    // path alone (a second API process without anonymous rate-limit windows); a plain GET / (no
    // database at all) shows what the machine gives Node at the time.
    const uncounted = options['skip-throughput'] ? null : await startServer(databaseUrl, false);
    if (uncounted) {
      try {
        const loadParams = {
          limit: 100,
          catalog: catalogs[0] ?? 'city-data',
          startDate: '2019-01-01T00:00:00Z',
          endDate: '2021-12-31T00:00:00Z',
        };
        // A different 3-year window for every request (minutes apart): no two requests ask the same
        // page, so each one misses the answer cache and is read from the database.
        let variedCount = 0;
        const variedPath = () => {
          const start = Date.parse('2017-01-01T00:00:00Z') + variedCount * 37 * 60_000;
          variedCount += 1;
          const end = start + 3 * 365 * 86_400_000;
          return url('', '/api/v1/events', {
            ...loadParams,
            startDate: new Date(start).toISOString(),
            endDate: new Date(end).toISOString(),
          });
        };
        const noCache = { 'cache-control': 'no-cache' };
        const runs: Array<{
          server: string;
          path: string;
          scenario: string;
          headers?: Record<string, string>;
          varied?: boolean;
        }> = [
          {
            server: base,
            path: '/api/v1/events',
            scenario:
              'limit=100, catalog + dates, one URL repeated (answer cache hits), rate-limit counters on',
          },
          {
            // The same, compressed: what @fastify/compress costs per answer (docs/performance.md).
            server: base,
            path: '/api/v1/events',
            scenario:
              'limit=100, catalog + dates, one URL repeated (answer cache hits), Accept-Encoding: gzip, rate-limit counters on',
            headers: { 'accept-encoding': 'gzip' },
          },
          {
            server: base,
            path: '/api/v1/events',
            scenario: 'limit=100, catalog + dates, one URL, Cache-Control: no-cache, rate-limit counters on',
            headers: noCache,
          },
          {
            server: base,
            path: '/api/v1/events',
            scenario:
              'limit=100, catalog + dates, one URL, Cache-Control: no-cache, Accept-Encoding: gzip, rate-limit counters on',
            headers: { ...noCache, 'accept-encoding': 'gzip' },
          },
          {
            server: base,
            path: '/api/v1/events',
            scenario:
              'limit=100, catalog + a different 3-year window per request (cache misses), rate-limit counters on',
            varied: true,
          },
          {
            server: uncounted.base,
            path: '/api/v1/events',
            scenario:
              'limit=100, catalog + dates, one URL repeated (answer cache hits), no rate-limit counters',
          },
          {
            server: uncounted.base,
            path: '/api/v1/events',
            scenario: 'limit=100, catalog + dates, one URL, Cache-Control: no-cache, no rate-limit counters',
            headers: noCache,
          },
          {
            server: uncounted.base,
            path: '/api/v1/events',
            scenario:
              'limit=100, catalog + a different 3-year window per request (cache misses), no rate-limit counters',
            varied: true,
          },
          { server: uncounted.base, path: '/', scenario: 'GET / (no database), reference' },
        ];
        for (const run of runs) {
          const server = run.server === base ? child : uncounted.child;
          const cpu = server.pid === undefined ? null : await startCpuCount(server.pid, client);
          const before = variedCount;
          const load = await autocannon({
            url: run.path === '/' ? `${run.server}/` : url(run.server, run.path, loadParams),
            connections: Number(options.connections),
            duration: Number(options.duration),
            ...(run.headers ? { headers: run.headers } : {}),
            ...(run.varied
              ? { requests: [{ setupRequest: (request: object) => ({ ...request, path: variedPath() }) }] }
              : {}),
          });
          const distinct = run.varied ? `; ${variedCount - before} distinct URLs` : '';
          const cpuNote = cpu
            ? `; ${describeCpu(await cpu(), load.requests.total, Number(options.duration))}`
            : '';
          rows.push({
            endpoint: `${run.path === '/' ? '/' : '/events'} (autocannon)`,
            scenario: `${run.scenario}, ${options.connections} connections, ${options.duration} s, ${processes} API process${processes === 1 ? '' : 'es'}`,
            runs: load.requests.total,
            p50: load.latency.p50,
            p95: load.latency.p97_5,
            ...(run.path === '/' ? {} : { target: '>= 1000 req/s' }),
            note: `${Math.round(load.requests.average)} req/s average, ${load.non2xx} non-2xx, ${load.errors} errors (p95 column: p97.5)${distinct}; load ${loadAverage()}${cpuNote}`,
          });
          log(
            `autocannon ${run.scenario}: ${Math.round(load.requests.average)} req/s${distinct}; load ${loadAverage()}${cpuNote}`,
          );
        }
      } finally {
        uncounted.child.kill('SIGTERM');
      }
    }
  } finally {
    child.kill('SIGTERM');
    await client.end();
  }

  report(rows, total);
}

await main();

// CPU per /events page asked once, without HTTP: the throughput request of run.ts (catalog, limit
// 100, a different 3-year window each time, so every page is read from the database) through the
// reader's use case, `--concurrency` at a time on a pool of that size. Prints the CPU milliseconds
// per page of this process (the API's share of the read path: building the SQL, Slonik, the driver)
// and of the PostgreSQL backends serving it (from /proc). Rounds alternate between the checkouts
// given with `--code` (default: this one), so that the machine's load hits both alike: run one
// checkout's code against another's (`git archive main | tar -x -C /tmp/main-code`, node_modules
// linked) on the same database.
//
//   node bench/read-api/page-cost.ts [--pages 300] [--rounds 3] [--concurrency 4] [--code dir,dir]

import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { listEventsModule, readerModule } from './reader-module.ts';
import { benchDatabaseUrl } from './bench-database.ts';
import { startCpuCount } from './cpu-time.ts';

const { values: options } = parseArgs({
  options: {
    pages: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '4' },
    code: { type: 'string' },
  },
});

type Reader = { listEventsPage: (...args: never[]) => Promise<unknown> };
type Code = {
  name: string;
  listEvents: (deps: { events: Reader }, viewer: null, query: Record<string, unknown>) => Promise<string>;
  createDatabasePool: (
    url: string,
    options: { maximumPoolSize: number; genericPlans?: boolean },
  ) => Promise<{ end(): Promise<void> }>;
  postgresEventReader: (pool: unknown, options: { genericPlanPool?: unknown }) => Reader;
};

async function load(root: string): Promise<Code> {
  const from = (file: string) => import(pathToFileURL(path.join(root, file)).href);
  const [useCase, database, reader] = await Promise.all([
    from(listEventsModule(root)),
    from('src/adapters/postgres/database.ts'),
    from(readerModule(root)),
  ]);
  return {
    name: root,
    listEvents: useCase.listEvents,
    createDatabasePool: database.createDatabasePool,
    postgresEventReader: reader.postgresEventReader,
  };
}

const loadAverage = () =>
  os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ');

// The windows of run.ts's throughput run: 3 years, starting 37 minutes apart. Each round and each
// checkout gets windows of its own (never asked before in the run), in the same sequence of shapes.
let asked = 0;
function nextQuery(catalog: string): Record<string, unknown> {
  const start = Date.parse('2017-01-01T00:00:00Z') + asked * 37 * 60_000;
  asked += 1;
  return {
    limit: '100',
    catalog,
    startDate: new Date(start).toISOString(),
    endDate: new Date(start + 3 * 365 * 86_400_000).toISOString(),
  };
}

async function measure(code: Code, url: string, client: pg.Client, catalog: string, pages: number) {
  const concurrency = Number(options.concurrency);
  const pool = await code.createDatabasePool(url, { maximumPoolSize: concurrency });
  // As composed for the API (src/composition/read.ts); code without generic-plan pools ignores both options.
  const genericPlanPool = await code.createDatabasePool(url, {
    maximumPoolSize: concurrency,
    genericPlans: true,
  });
  const deps = { events: code.postgresEventReader(pool, { genericPlanPool }) };
  try {
    // Warm-up: connections opened, statements prepared on each of them.
    await Promise.all(
      Array.from({ length: concurrency * 8 }, () => code.listEvents(deps, null, nextQuery(catalog))),
    );
    const cpu = await startCpuCount(process.pid, client);
    const started = performance.now();
    let left = pages;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left > 0) {
          left -= 1;
          await code.listEvents(deps, null, nextQuery(catalog));
        }
      }),
    );
    const elapsed = performance.now() - started;
    const split = await cpu();
    return {
      api: (split.apiMs ?? Number.NaN) / pages,
      database: (split.databaseMs ?? Number.NaN) / pages,
      elapsed,
    };
  } finally {
    await Promise.all([pool.end(), genericPlanPool.end()]);
  }
}

async function main(): Promise<void> {
  const url = await benchDatabaseUrl();
  const roots = options.code?.split(',').map((dir) => path.resolve(dir)) ?? [projectRoot];
  const codes = await Promise.all(roots.map(load));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const catalog = (await client.query('select slug from catalogs order by id limit 1')).rows[0]
      .slug as string;
    const pages = Number(options.pages);
    for (let round = 1; round <= Number(options.rounds); round += 1) {
      for (const code of codes) {
        const result = await measure(code, url, client, catalog, pages);
        process.stdout.write(
          `round ${round} ${code.name}: ${pages} pages, CPU ms per page: reader process ${result.api.toFixed(2)}, ` +
            `PostgreSQL ${result.database.toFixed(2)}; ${(pages / (result.elapsed / 1000)).toFixed(0)} pages/s; ` +
            `load ${loadAverage()}\n`,
        );
      }
    }
  } finally {
    await client.end();
  }
}

await main();

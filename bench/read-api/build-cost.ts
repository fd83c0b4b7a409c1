// CPU per /events page for what the API process does besides the database and the sockets: the
// throughput request of run.ts and page-cost.ts (catalog, limit 100, a different 3-year window each
// time) through the use case and the reader, with a pool that answers at once (no database, no I/O):
// parsing the request, the scope, building the page statement's text and values, its name. Rounds
// alternate between the checkouts given with `--code` (default: this one), as in page-cost.ts.
//
//   node bench/read-api/build-cost.ts [--pages 20000] [--rounds 3] [--code dir,dir]

import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { listEventsModule, readerModule } from './reader-module.ts';

const { values: options } = parseArgs({
  options: {
    pages: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    code: { type: 'string' },
  },
});

type Statement = { sql: string; values: readonly unknown[] };
type Code = {
  name: string;
  listEvents: (deps: { events: unknown }, viewer: null, query: Record<string, unknown>) => Promise<string>;
  postgresEventReader: (pool: unknown, options: { genericPlanPool?: unknown }) => unknown;
};

async function load(root: string): Promise<Code> {
  const from = (file: string) => import(pathToFileURL(path.join(root, file)).href);
  const [useCase, reader] = await Promise.all([from(listEventsModule(root)), from(readerModule(root))]);
  return { name: root, listEvents: useCase.listEvents, postgresEventReader: reader.postgresEventReader };
}

// One row that serves every statement of the page: the scope row (a whole catalog of 3 datasets,
// half of all events, so the generic-plan path) and the page row with matching signatures.
const ANSWER = {
  ids: [1, 2, 3],
  hidden: 0,
  catalog_id: 1,
  pending: false,
  signature: '1',
  share: 0.5,
  events: '[]',
  total: 0,
  scope: '1',
  data: '1:1',
};

let asked = 0;
function nextQuery(): Record<string, unknown> {
  const start = Date.parse('2017-01-01T00:00:00Z') + asked * 37 * 60_000;
  asked += 1;
  return {
    limit: '100',
    catalog: 'culture',
    startDate: new Date(start).toISOString(),
    endDate: new Date(start + 3 * 365 * 86_400_000).toISOString(),
  };
}

async function measure(code: Code, pages: number): Promise<{ cpu: number; text: number }> {
  let text = 0;
  const pool = {
    one: async (statement: Statement) => {
      text += statement.sql.length;
      return ANSWER;
    },
    oneFirst: async () => 2,
  };
  const deps = { events: code.postgresEventReader(pool, { genericPlanPool: pool }) };
  for (let i = 0; i < 2000; i += 1) await code.listEvents(deps, null, nextQuery());
  text = 0;
  const started = process.cpuUsage();
  for (let i = 0; i < pages; i += 1) await code.listEvents(deps, null, nextQuery());
  const used = process.cpuUsage(started);
  return { cpu: (used.user + used.system) / 1000 / pages, text: text / pages };
}

const roots = options.code?.split(',').map((dir) => path.resolve(dir)) ?? [projectRoot];
const codes = await Promise.all(roots.map(load));
for (let round = 1; round <= Number(options.rounds); round += 1) {
  for (const code of codes) {
    const result = await measure(code, Number(options.pages));
    process.stdout.write(
      `round ${round} ${code.name}: CPU us per page ${(result.cpu * 1000).toFixed(1)} ` +
        `(statement text ${result.text.toFixed(0)} characters); load ${os
          .loadavg()
          .map((v) => v.toFixed(2))
          .join(' ')}\n`,
    );
  }
}

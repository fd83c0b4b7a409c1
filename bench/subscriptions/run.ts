// What subscriptions cost an import and how soon their webhooks arrive (issue 39 §5), in one run:
// the same import (rows written in batches of 1,000, one transaction each, as the pipeline's
// writer commits them) into a database without subscriptions, then with SUBSCRIPTIONS enabled
// webhook subscriptions (boxes of 0.2°–1° spread over the events' area, a hundredth of them by dataset
// only) and the subscriptions' worker running beside it (match, then send, in a loop, as a pg-boss
// round does); a receiver on loopback counts every change it gets. Printed: the import's time
// without and with subscriptions, and the delivery latency p50/p95 from the commit of a change's
// batch to its arrival at the receiver, with the load average.
//
//   npx node bench/subscriptions/run.ts [--rows 100000] [--subscriptions 10000] [--base DIR]
//
// --base DIR (a checkout, e.g. `git worktree add --detach /work/wt-base <commit>` with
// node_modules linked in it): this file is copied into it and run there first, then here, on the
// same server and database, and both results are printed together (the delivery code compared in
// one run; each run prints its own load average).
//
// Matching runs after the commit (the change log is written by the same triggers either way), so
// the import's added time is the worker's competition for the machine, not work in its
// transactions.
import { execFileSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { guardedWebhookPoster } from '../../src/adapters/fetch/webhook-poster.ts';
import { createDatabasePool } from '../../src/adapters/postgres/database.ts';
import { ensureDatabase } from '../../src/adapters/postgres/embedded-cluster.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { postgresSubscriptionStore } from '../../src/adapters/postgres/subscriptions/subscription-store.ts';
import {
  type DeliveryDeps,
  matchStoredChanges,
  sendDueDeliveries,
} from '../../src/application/subscriptions/deliver-subscriptions.ts';
import { changeFeedOn } from '../../src/composition/read.ts';
import { benchDatabaseUrl } from '../read-api/bench-database.ts';
import { loadAverage, percentile } from '../read-api/measure.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    subscriptions: { type: 'string', default: '10000' },
    base: { type: 'string' },
  },
});
if (values.base) {
  const here = import.meta.filename;
  const root = path.resolve(path.dirname(here), '..', '..');
  const copy = path.join(path.resolve(values.base), 'bench', 'subscriptions', 'run-compare.ts');
  copyFileSync(here, copy);
  const args = ['--rows', values.rows, '--subscriptions', values.subscriptions];
  const once = (script: string, cwd: string) =>
    execFileSync(process.execPath, [script, ...args], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  const base = once(copy, path.resolve(values.base));
  const current = once(here, root);
  process.stdout.write(
    `## base (${path.resolve(values.base)})\n${base}## this checkout (${root})\n${current}`,
  );
  process.exit(0);
}
const ROWS = Number(values.rows);
const SUBSCRIPTIONS = Number(values.subscriptions);
const BATCH = 1_000;
const SEND_TIMEOUT_MS = 10_000;

const base = new URL(await benchDatabaseUrl());
const url = new URL(base);
url.pathname = '/chronomap_bench_subscriptions';
await ensureDatabase(base.toString().replace(/\/[^/]*$/, '/postgres'), 'chronomap_bench_subscriptions');
await migrate(url.toString(), loadMigrations(), () => {});
const pool = await createDatabasePool(url.toString(), { maximumPoolSize: 6 });
const client = new pg.Client({ connectionString: url.toString() });
await client.connect();
await client.query(`truncate catalogs, subscriptions, subscription_deliveries, event_changes cascade`);
await client.query(`delete from users where email = 'bench-subscriptions@example.org'`);
const owner = (
  await client.query(
    `insert into users (email, password_hash, trust_level) values ('bench-subscriptions@example.org', 'x', 5) returning id`,
  )
).rows[0].id as number;
await client.query(`
  with cat as (insert into catalogs (slug, title, is_public) values ('bench', 'Bench', true) returning id)
  insert into datasets (catalog_id, slug, title, is_public) select id, 'bench-' || s, 'Bench ' || s, true
  from cat, unnest(array['a', 'b']) s`);

// Receives and counts: the arrival time of every change, by its batch (the event's title).
const arrivals: { batch: number; at: number }[] = [];
const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const at = performance.now();
    const body = JSON.parse(Buffer.concat(chunks).toString()) as { changes: { event?: { title: string } }[] };
    for (const change of body.changes)
      arrivals.push({ batch: Number(change.event?.title.split(' ')[0]), at });
    response.writeHead(200).end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

/** Imports ROWS events in batches; the commit time of each batch. */
async function importRows(run: string): Promise<{ ms: number; commits: number[] }> {
  const commits: number[] = [];
  const started = performance.now();
  for (let b = 0; b < ROWS / BATCH; b += 1) {
    await client.query(
      `insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
       select d.id, d.catalog_id, $1 || i, $2 || ' event ' || i, '{}'::jsonb,
              st_setsrid(st_makepoint(5 + 10 * ((hashint4(i) & 65535) / 65535.0),
                                      45 + 10 * ((hashint4(i * 7) & 65535) / 65535.0)), 4326),
              timestamptz '2025-01-01' + (i % 365) * interval '1 day'
       from generate_series($3::int, $4::int) i
       join datasets d on d.slug = case when i % 2 = 0 then 'bench-a' else 'bench-b' end`,
      [`${run}-`, String(b), b * BATCH, (b + 1) * BATCH - 1],
    );
    commits.push(performance.now());
  }
  return { ms: performance.now() - started, commits };
}

const baseline = await importRows('baseline');
// The baseline's changes are not the subscriptions' (they existed before).
await client.query(
  `insert into subscriptions (owner_id, name, channel, url, secret, catalog, datasets, box, bounds)
   select $1, 'bench ' || i, 'webhook', $2, 'whsec_' || encode(sha256(i::text::bytea), 'base64'), null,
          case when i % 100 = 0 then array['bench-a'] else '{}' end,
          case when i % 100 = 0 then null else jsonb_build_object('west', w, 'south', s, 'east', w + size, 'north', s + size) end,
          case when i % 100 = 0 then null else st_makeenvelope(w, s, w + size, s + size, 4326) end
   from (select i, 5 + 9 * random() as w, 45 + 9 * random() as s, 0.2 + 0.8 * random() as size
         from generate_series(1, $3::int) i) x`,
  [owner, receiver, SUBSCRIPTIONS],
);
await client.query(`analyze subscriptions`);
await client.query(
  `update subscription_cursors set (txid, seq) = (select txid, seq from event_changes order by txid desc, seq desc limit 1)`,
);

const deps: DeliveryDeps = {
  subscriptions: postgresSubscriptionStore(pool),
  changes: changeFeedOn(pool),
  webhooks: guardedWebhookPoster({ timeoutMs: SEND_TIMEOUT_MS, allowPrivateAddresses: true }),
  digests: null,
  random: Math.random,
  now: Date.now,
  publicBaseUrl: 'http://localhost',
  retryBaseMs: 1_000,
  leaseMs: 60_000,
  sendTimeoutMs: SEND_TIMEOUT_MS,
  log: () => {},
};
let importing = true;
let matchMs = 0;
const worker = (async () => {
  for (;;) {
    const started = performance.now();
    const matched = await matchStoredChanges(deps);
    matchMs += performance.now() - started;
    let sent = 0;
    while ((sent = await sendDueDeliveries(deps, 100)) > 0) void sent;
    if (!importing && matched === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
})();
const subscribed = await importRows('subscribed');
importing = false;
await worker;

const expected = Number(
  (await client.query(`select count(*) from subscription_deliveries d, jsonb_array_elements(d.changes)`))
    .rows[0].count,
);
const latencies = arrivals.map((a) => a.at - (subscribed.commits[a.batch] ?? NaN)).filter(Number.isFinite);
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
process.stdout.write(
  [
    `subscriptions benchmark: ${ROWS} rows in batches of ${BATCH}, ${SUBSCRIPTIONS} subscriptions, load average ${loadAverage()}`,
    `import without subscriptions (baseline): ${fmt(baseline.ms)}`,
    `import with subscriptions and the worker running: ${fmt(subscribed.ms)} (${(((subscribed.ms - baseline.ms) / baseline.ms) * 100).toFixed(1)}% added)`,
    `matched changes delivered: ${arrivals.length} of ${expected} queued (${(arrivals.length / ROWS).toFixed(2)} per row); matching took ${fmt(matchMs)} in all`,
    `delivery latency, commit to receiver: p50 ${fmt(percentile(latencies, 0.5))}, p95 ${fmt(percentile(latencies, 0.95))}`,
    '',
  ].join('\n'),
);
await client.end();
await pool.end();
server.close();

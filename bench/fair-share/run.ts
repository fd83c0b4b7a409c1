// Another user's latency while anonymous callers flood the costly routes (issue 30 §2, M-2: twenty
// concurrent heavy collection lists from one anonymous address took another user's /api/catalogs
// from 3-7 ms to a median of 3.4 s). One run measures a logged-in user's two reads,
//   GET /api/catalogs and GET /api/events?where[dataset][equals]=<hers>,
// one request after another, p50 and p95:
//   - idle (no flood);
//   - under a flood of --flood concurrent heavy lists (`where[title][contains]` over every public
//     event, sorted) from one anonymous address, and from --flood addresses (X-Forwarded-For),
//     with the shipped places (config/quotas.yaml, concurrentRequests);
//   - under the same flood from one address with the places lifted: the baseline, as before.
// The flood holds its share: a refused request waits the Retry-After it was given, as a client within
// its rate limit would (the request rate limits are lifted for everyone, so that only the places act).
// Data: --events public events in a database of their own (BENCH_DATABASE_URL, else
// `chronomap_bench_fair` in this checkout's embedded cluster), made once.
//
//   node bench/fair-share/run.ts [--events 200000] [--flood 20] [--seconds 12]

import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { projectRoot } from '../../src/adapters/config/environment.ts';
import { ensureDatabase, ensureEmbeddedCluster } from '../../src/adapters/postgres/embedded-cluster.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { scryptPasswordHasher } from '../../src/adapters/security/scrypt-password-hasher.ts';
import { benchPolicyFile, startChronomapApi } from '../api-server.ts';
import { percentile } from '../read-api/measure.ts';

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '200000' },
    flood: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '12' },
  },
});
const EVENTS = Number(options.events);
const FLOOD = Number(options.flood);
const SECONDS = Number(options.seconds);
const EMAIL = 'fair-share-bench@example.org';
const PASSWORD = 'fair share bench password';

async function databaseUrl(): Promise<string> {
  const explicit = process.env.BENCH_DATABASE_URL;
  if (explicit) {
    if (!/bench/i.test(new URL(explicit).pathname)) throw new Error('the database name must contain "bench"');
    return explicit;
  }
  const cluster = await ensureEmbeddedCluster({
    dataDir: path.join(projectRoot, '.data', 'postgres'),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  await ensureDatabase(cluster.url('postgres'), 'chronomap_bench_fair');
  return cluster.url('chronomap_bench_fair');
}

/** The public events the flood scans, and the user's own private catalog; made once. */
async function prepare(url: string): Promise<number> {
  await migrate(url, loadMigrations(), () => {});
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const have =
      await client.query(`select count(*)::int as n from events e join datasets d on d.id = e.dataset_id
      where d.slug = 'flood-target'`);
    if (have.rows[0].n !== EVENTS) {
      process.stderr.write(`making ${EVENTS} public events...\n`);
      await client.query(`delete from catalogs where slug in ('flood-target', 'hers')`);
      await client.query(
        `with c as (insert into catalogs (slug, title, is_public) values ('flood-target', 'Public', true) returning id),
         d as (insert into datasets (catalog_id, slug, title, is_public) select id, 'flood-target', 'Public', true from c returning id, catalog_id)
         insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
         select d.id, d.catalog_id, 'e' || n, 'event number ' || n, jsonb_build_object('note', md5(n::text)),
                timestamptz '2000-01-01' + n * interval '37 minutes'
         from d cross join generate_series(1, $1::int) n`,
        [EVENTS],
      );
      await client.query('analyze events');
    }
    const hash = await scryptPasswordHasher().hash(PASSWORD);
    const user = await client.query(
      `insert into users (email, password_hash, role, trust_level) values ($1, $2, 'user', 2)
       on conflict (lower(email)) do update set password_hash = excluded.password_hash returning id`,
      [EMAIL, hash],
    );
    const owner = Number(user.rows[0].id);
    const hers = await client.query(`select d.id from datasets d where d.slug = 'hers'`);
    if (hers.rows.length > 0) return Number(hers.rows[0].id);
    const made = await client.query(
      `with c as (insert into catalogs (slug, title, is_public, created_by) values ('hers', 'Hers', false, $1) returning id),
       d as (insert into datasets (catalog_id, slug, title, is_public, created_by) select id, 'hers', 'Hers', false, $1 from c returning id, catalog_id),
       e as (insert into events (dataset_id, catalog_id, unique_id, title, data, event_timestamp)
             select d.id, d.catalog_id, 'h' || n, 'hers ' || n, '{}'::jsonb, timestamptz '2024-01-01' + n * interval '1 hour'
             from d cross join generate_series(1, 200) n)
       select id from d`,
      [owner],
    );
    return Number(made.rows[0].id);
  } finally {
    await client.end();
  }
}

type Stats = { p50: number; p95: number; runs: number; errors: number };

/** The user's two reads, one after another, until `until`; latencies in ms. */
async function measureUser(base: string, token: string, dataset: number, until: number) {
  const urls = {
    '/api/catalogs': `${base}/api/catalogs`,
    '/api/events (hers)': `${base}/api/events?where[dataset][equals]=${dataset}&limit=10`,
  };
  const samples: Record<string, number[]> = { '/api/catalogs': [], '/api/events (hers)': [] };
  const errors: Record<string, number> = { '/api/catalogs': 0, '/api/events (hers)': 0 };
  while (performance.now() < until) {
    for (const [name, url] of Object.entries(urls)) {
      const started = performance.now();
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      await response.arrayBuffer();
      samples[name]?.push(performance.now() - started);
      if (response.status !== 200) errors[name] = (errors[name] ?? 0) + 1;
    }
  }
  const stats: Record<string, Stats> = {};
  for (const [name, values] of Object.entries(samples)) {
    stats[name] = {
      p50: percentile(values, 0.5),
      p95: percentile(values, 0.95),
      runs: values.length,
      errors: errors[name] ?? 0,
    };
  }
  return stats;
}

/** `workers` anonymous clients asking heavy lists until `until`; each waits out a 429's Retry-After. */
async function flood(base: string, workers: number, addresses: 'one' | 'many', until: number) {
  const counts = { answered: 0, refused: 0, failed: 0 };
  const worker = async (index: number) => {
    const address = addresses === 'one' ? '198.51.100.1' : `198.51.100.${index + 1}`;
    let n = 0;
    while (performance.now() < until) {
      n += 1;
      const response = await fetch(
        `${base}/api/events?where[title][contains]=${index}x${n}&sort=-eventTimestamp&limit=100`,
        { headers: { 'x-forwarded-for': address } },
      );
      await response.arrayBuffer();
      if (response.status === 200) counts.answered += 1;
      else if (response.status === 429) {
        counts.refused += 1;
        const wait = Number(response.headers.get('retry-after') ?? 1) * 1000;
        await new Promise((resolve) => setTimeout(resolve, Math.min(wait, until - performance.now())));
      } else counts.failed += 1;
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, index) => worker(index)));
  return counts;
}

async function login(base: string): Promise<string> {
  const response = await fetch(`${base}/api/users/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
  });
  if (response.status !== 200) throw new Error(`login: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { token: string }).token;
}

type Phase = {
  name: string;
  user: Record<string, Stats>;
  flood?: { answered: number; refused: number; failed: number };
};

async function phase(
  name: string,
  base: string,
  token: string,
  dataset: number,
  floodShape: { addresses: 'one' | 'many' } | null,
): Promise<Phase> {
  const until = performance.now() + SECONDS * 1000;
  const flooding = floodShape ? flood(base, FLOOD, floodShape.addresses, until) : undefined;
  // The flood first takes what it can get.
  if (flooding) await new Promise((resolve) => setTimeout(resolve, 500));
  const user = await measureUser(base, token, dataset, until);
  const result: Phase = { name, user };
  if (flooding) result.flood = await flooding;
  process.stderr.write(`${name}: done; load ${os.loadavg()[0]?.toFixed(2)}\n`);
  return result;
}

async function withApi<T>(url: string, limits: boolean, run: (base: string) => Promise<T>): Promise<T> {
  const { base, child } = await startChronomapApi({
    DATABASE_URL: url,
    API_PROCESSES: '1',
    TRUST_PROXY: 'true',
    QUOTAS_CONFIG: benchPolicyFile(false, { concurrencyLimits: limits, liftUserRates: true }),
  });
  try {
    return await run(base);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

async function main(): Promise<void> {
  const url = await databaseUrl();
  const dataset = await prepare(url);
  const phases: Phase[] = [];
  await withApi(url, true, async (base) => {
    const token = await login(base);
    // Warm the plans and the connections.
    await measureUser(base, token, dataset, performance.now() + 1000);
    phases.push(await phase('idle', base, token, dataset, null));
    phases.push(
      await phase(`flood of ${FLOOD} from one address, places on`, base, token, dataset, {
        addresses: 'one',
      }),
    );
    phases.push(
      await phase(`flood from ${FLOOD} addresses, places on`, base, token, dataset, { addresses: 'many' }),
    );
  });
  await withApi(url, false, async (base) => {
    const token = await login(base);
    await measureUser(base, token, dataset, performance.now() + 1000);
    phases.push(
      await phase(`flood of ${FLOOD} from one address, places off (baseline)`, base, token, dataset, {
        addresses: 'one',
      }),
    );
  });

  const idle = phases[0]?.user ?? {};
  const lines = [
    `# Fair share: another user's reads under an anonymous flood (${EVENTS} public events, ${FLOOD} flooding clients, ${SECONDS} s a phase; ${os.cpus().length} CPUs, load ${os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')})`,
    '',
    '| phase | read | runs | p50 ms | p95 ms | p95 vs idle | non-200 | flood answered / refused (429) / failed |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const { name, user, flood: counts } of phases) {
    for (const [read, stats] of Object.entries(user)) {
      const ratio = stats.p95 / (idle[read]?.p95 ?? Number.NaN);
      lines.push(
        `| ${name} | ${read} | ${stats.runs} | ${stats.p50.toFixed(1)} | ${stats.p95.toFixed(1)} | ${ratio.toFixed(1)}x | ${stats.errors} | ${
          counts ? `${counts.answered} / ${counts.refused} / ${counts.failed}` : ''
        } |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();

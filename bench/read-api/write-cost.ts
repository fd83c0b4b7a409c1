// What the read API's precomputed counts cost the writers: inserts of generated events into the
// benchmark database with the triggers of 0200 (event_counts, event_cell_counts), 0210
// (event_fine_cell_counts) and 0235 (event_cell_day_counts) on or off, and the index of 0250 on
// event_counts dropped or not, alternated round by round
// so that a change in the machine's load hits every variant alike. Each insert runs in a
// transaction that is rolled back: the triggers do all their work (statement-level, at the end of
// the statement) and the data set is left as it was.
//
//   node bench/read-api/write-cost.ts [--rows 50000] [--rounds 3]

import os from 'node:os';
import { parseArgs } from 'node:util';
import { benchDatabaseUrl, withClient } from './bench-database.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
  },
});
const rows = Number(values.rows);
const rounds = Number(values.rounds);

// `drop`: indexes of the count tables dropped for the variant (in its transaction, rolled back too).
const VARIANTS: Array<{ name: string; disable: string[]; drop?: string[] }> = [
  {
    name: 'no count triggers',
    disable: ['events_counts_insert', 'events_fine_counts_insert', 'events_cell_day_counts_insert'],
  },
  { name: '0200 triggers only', disable: ['events_fine_counts_insert', 'events_cell_day_counts_insert'] },
  { name: '0200 + 0210 triggers', disable: ['events_cell_day_counts_insert'] },
  {
    name: '0200 + 0210 + 0235 triggers, without 0250 index',
    disable: [],
    drop: ['event_counts_by_dataset_idx'],
  },
  { name: '0200 + 0210 + 0235 triggers', disable: [] },
];

const INSERT = `
  insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
  select d.id, d.catalog_id, 'write-cost-' || g, 'write cost ' || g,
         jsonb_build_object('value', g, 'category', 'traffic'),
         st_setsrid(st_makepoint(2.35 + (random() - 0.5) * 0.5, 48.85 + (random() - 0.5) * 0.5), 4326),
         timestamptz '2016-01-01' + random() * interval '3652 days'
  from generate_series(1, $1::int) g
  join (select id, catalog_id, row_number() over (order by id) - 1 as n, count(*) over () as total
        from datasets) d on d.n = g % d.total`;

const url = await benchDatabaseUrl();
const seconds = new Map<string, number[]>(VARIANTS.map((variant) => [variant.name, []]));
await withClient(url, async (client) => {
  const datasets = Number((await client.query('select count(*) as n from datasets')).rows[0].n);
  if (datasets === 0) throw new Error('no datasets: run bench/read-api/generate.ts first');
  for (let round = 0; round < rounds; round++) {
    for (const variant of VARIANTS) {
      await client.query('begin');
      for (const trigger of variant.disable)
        await client.query(`alter table events disable trigger ${trigger}`);
      for (const index of variant.drop ?? []) await client.query(`drop index if exists ${index}`);
      const started = performance.now();
      await client.query(INSERT, [rows]);
      const elapsed = (performance.now() - started) / 1000;
      await client.query('rollback');
      seconds.get(variant.name)?.push(elapsed);
      process.stderr.write(
        `round ${round + 1} ${variant.name}: ${Math.round(rows / elapsed)} rows/s; load ${os
          .loadavg()
          .map((v) => v.toFixed(2))
          .join(' ')}\n`,
      );
    }
  }
});

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? Number.NaN;
const base = median(seconds.get(VARIANTS[0]?.name ?? '') ?? []);
process.stdout.write(
  `# Insert cost of the read API's count triggers: ${rows} rows per statement, ${rounds} rounds\n\n`,
);
process.stdout.write('| variant | median rows/s | median s | vs no count triggers |\n|---|---|---|---|\n');
for (const variant of VARIANTS) {
  const m = median(seconds.get(variant.name) ?? []);
  process.stdout.write(
    `| ${variant.name} | ${Math.round(rows / m)} | ${m.toFixed(2)} | ${(m / base).toFixed(2)}x |\n`,
  );
}

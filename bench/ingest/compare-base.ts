// The write path against an older checkout in the same run (issue 37): the ingest bench on the same
// file, first with the checkout given by --base (its own src/ and migrations/; this bench file is
// copied into it, so both runs measure the same way), then with this one, then both figures and
// their ratio. Both use the same PostgreSQL server (DATABASE_URL, required: two embedded clusters
// would differ), each in a fresh database.
//
//   git worktree add --detach /work/wt-base <commit>; ln -s $PWD/node_modules /work/wt-base/
//   node bench/read-api/generate.ts --shape world --events 1000000 --csv /tmp/world-1m.csv
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \
//     node bench/ingest/compare-base.ts --base /work/wt-base --file /tmp/world-1m.csv \
//       [--fine-cells off] [--day-cells off]
// (--fine-cells off, --day-cells off: both runs with those count tables switched off first, where
// their schema has a mode for them.)
import { execFileSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../../src/adapters/config/environment.ts';

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    file: { type: 'string' },
    'fine-cells': { type: 'string', default: 'kept' },
    'day-cells': { type: 'string', default: 'kept' },
  },
});
if (!values.base || !values.file) throw new Error('--base DIR and --file FILE are required');
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required (both runs on one server)');
const file = path.resolve(values.file);

type Result = { rows: number; copySeconds: number; completedSeconds: number; countsRefreshedSeconds: number };

function run(root: string, script: string, label: string): Result {
  process.stdout.write(`## ${label} (${root})\n`);
  const output = execFileSync(
    process.execPath,
    [
      script,
      '--file',
      file,
      '--skip-geo',
      '--skip-sql-baselines',
      '--fine-cells',
      values['fine-cells'],
      '--day-cells',
      values['day-cells'],
    ],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 },
  );
  process.stdout.write(output);
  const line = output.split('\n').find((l) => l.startsWith('# RESULT '));
  if (!line) throw new Error(`${label}: no result line`);
  return JSON.parse(line.slice('# RESULT '.length)) as Result;
}

const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const baseScript = path.join(path.resolve(values.base), 'bench', 'ingest', 'ingest-bench-compare.ts');
copyFileSync(path.join(projectRoot, 'bench', 'ingest', 'ingest-bench.ts'), baseScript);
const base = run(path.resolve(values.base), baseScript, 'base');
const current = run(
  projectRoot,
  path.join(projectRoot, 'bench', 'ingest', 'ingest-bench.ts'),
  'this checkout',
);
const rate = (r: Result, seconds: number) => Math.round(r.rows / seconds);
for (const [label, r] of [
  ['base', base],
  ['this checkout', current],
] as const) {
  process.stdout.write(
    `${label}: upload -> completed ${rate(r, r.completedSeconds)} rows/s; upload -> counts refreshed ${rate(r, r.countsRefreshedSeconds)} rows/s (${((100 * r.copySeconds) / r.countsRefreshedSeconds).toFixed(2)} % of its \\copy, ${rate(r, r.copySeconds)} rows/s)\n`,
  );
}
process.stdout.write(
  `ratio until counts refreshed: ${(base.countsRefreshedSeconds / current.countsRefreshedSeconds).toFixed(2)}x; until completed: ${(base.completedSeconds / current.completedSeconds).toFixed(2)}x; load average ${loadAverage()}\n`,
);

// Soak: 3 concurrent runs, continuously, for N minutes; then checks that nothing leaked: no
// container of this runner, no workspace, no podman/conmon/git process beyond what was there
// before, and how much the runner's memory grew.
// Usage: node bench/runner/soak.ts [minutes=5]
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { RUNNER_LABEL } from '../../runner/src/sandbox/podman-args.ts';
import { ms, postRun, quantile, startRunner } from './common.ts';

const minutes = Number(process.argv[2] ?? 5);
const concurrency = 3;
const runner = await startRunner({ SCRAPER_MAX_CONCURRENT: String(concurrency) });

// A mix: mostly successes of varying length, some failures and timeouts, so every clean-up
// path is exercised.
const scrapers = [
  {
    weight: 6,
    expect: 'success',
    limits: {},
    source:
      'import time, random\nfrom chronomap.scraper import output\ntime.sleep(random.random())\noutput.write_rows([{"i": i} for i in range(1000)])\noutput.save()\n',
  },
  { weight: 1, expect: 'failed', limits: {}, source: 'raise SystemExit(2)\n' },
  { weight: 1, expect: 'timeout', limits: { timeout_secs: 1 }, source: 'import time\ntime.sleep(30)\n' },
  { weight: 1, expect: 'failed', limits: {}, source: 'print("no save")\n' },
];
const pool = scrapers.flatMap((s) => Array.from({ length: s.weight }, () => s));

function processCount(name: string): number {
  try {
    return Number(execFileSync('pgrep', ['-c', '-x', name], { encoding: 'utf8' }).trim());
  } catch {
    return 0; // pgrep exits 1 when there is none
  }
}
const processes = () => ({
  podman: processCount('podman'),
  conmon: processCount('conmon'),
  git: processCount('git'),
});

const before = processes();
const rssBefore = process.memoryUsage().rss;
const deadline = Date.now() + minutes * 60_000;
const durations: number[] = [];
const outcomes: Record<string, number> = {};
let unexpected = 0;

await Promise.all(
  Array.from({ length: concurrency }, async (_, worker) => {
    let n = worker;
    while (Date.now() < deadline) {
      const scraper = pool[n++ % pool.length] as (typeof pool)[number];
      const start = performance.now();
      const r = await postRun(runner.url, {
        run_id: randomUUID(),
        runtime: 'python',
        entrypoint: 'main.py',
        code: { 'main.py': scraper.source },
        limits: scraper.limits,
      });
      durations.push(performance.now() - start);
      const outcome = r.status === 200 ? String(r.json.status) : `http ${r.status}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      if (outcome !== scraper.expect) unexpected += 1;
    }
  }),
);

const containers = execFileSync(
  'podman',
  ['ps', '-a', '--format', '{{.Names}}', '--filter', `label=${RUNNER_LABEL}=${runner.runs.instanceLabel}`],
  { encoding: 'utf8' },
)
  .split('\n')
  .filter(Boolean);
const workspaces = readdirSync(runner.dataDir);
const after = processes();
const rssAfter = process.memoryUsage().rss;
await runner.app.close();
rmSync(runner.dataDir, { recursive: true, force: true });

const total = durations.length;
console.log(
  `runner soak: ${minutes} min, ${concurrency} concurrent, ${total} runs (${(total / minutes).toFixed(1)} per minute), load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(`  outcomes                   ${JSON.stringify(outcomes)}   unexpected: ${unexpected}`);
console.log(
  `  POST /run                  p50 ${ms(quantile(durations, 0.5))}  p95 ${ms(quantile(durations, 0.95))}  max ${ms(Math.max(...durations))}`,
);
console.log(`  leaked containers          ${containers.length}`);
console.log(`  leaked workspaces          ${workspaces.length}`);
console.log(
  `  processes before -> after  podman ${before.podman}->${after.podman}  conmon ${before.conmon}->${after.conmon}  git ${before.git}->${after.git}`,
);
console.log(
  `  runner rss                 ${(rssBefore / 1048576).toFixed(0)} MB -> ${(rssAfter / 1048576).toFixed(0)} MB`,
);
const leaked =
  containers.length +
  workspaces.length +
  Math.max(0, after.conmon - before.conmon) +
  Math.max(0, after.git - before.git) +
  Math.max(0, after.podman - before.podman);
console.log(
  leaked === 0 && unexpected === 0
    ? '  result                     no leaks'
    : '  result                     LEAK OR UNEXPECTED OUTCOME',
);
process.exitCode = leaked === 0 && unexpected === 0 ? 0 : 1;

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

function count(args: string[]): number {
  try {
    return Number(execFileSync('pgrep', ['-c', ...args], { encoding: 'utf8' }).trim());
  } catch {
    return 0; // pgrep exits 1 when there is none
  }
}
const runIds = new Set<string>();
function ourConmons(): number {
  let lines: string[];
  try {
    lines = execFileSync('pgrep', ['-af', 'conmon'], { encoding: 'utf8' }).split('\n');
  } catch {
    return 0;
  }
  return lines.filter((line) => runIds.has(/-n chronomap-run-([0-9a-f-]{36})/.exec(line)?.[1] ?? '')).length;
}
// Only what this runner could have left: its own child processes (podman, git) and the conmon
// monitors of its scraper containers. Other podman users and runners on the host do not count.
const processes = () => ({ children: count(['-P', String(process.pid)]), conmon: ourConmons() });

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
      const runId = randomUUID();
      runIds.add(runId);
      const r = await postRun(runner.url, {
        run_id: runId,
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
  `  processes before -> after  runner children ${before.children}->${after.children}  scraper conmon ${before.conmon}->${after.conmon}`,
);
console.log(
  `  runner rss                 ${(rssBefore / 1048576).toFixed(0)} MB -> ${(rssAfter / 1048576).toFixed(0)} MB`,
);
const leaked =
  containers.length +
  workspaces.length +
  Math.max(0, after.conmon - before.conmon) +
  Math.max(0, after.children - before.children);
console.log(
  leaked === 0 && unexpected === 0
    ? '  result                     no leaks'
    : '  result                     LEAK OR UNEXPECTED OUTCOME',
);
process.exitCode = leaked === 0 && unexpected === 0 ? 0 : 1;

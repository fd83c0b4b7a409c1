// POST /run latency of a trivial Python scraper against a bare `podman run` of the same image
// and command, measured alternately in the same process so both see the same machine.
// Usage: node bench/runner/latency.ts [iterations=15]
// Targets (issue 6): median POST /run <= 1500 ms; overhead over bare podman run <= 300 ms.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostHasIpv6, podmanRunArgs } from '../../runner/src/sandbox/podman-args.ts';
import { TRIVIAL_SCRAPER, ms, postRun, quantile, startRunner } from './common.ts';

const iterations = Number(process.argv[2] ?? 15);
const runner = await startRunner({ SCRAPER_MAX_CONCURRENT: '1' });
const scratch = mkdtempSync(join(tmpdir(), 'chronomap-bench-bare-'));
const code = join(scratch, 'code');
const out = join(scratch, 'output');
mkdirSync(code);
mkdirSync(out);
writeFileSync(join(code, 'main.py'), TRIVIAL_SCRAPER);
writeFileSync(join(scratch, 'env'), 'CHRONOMAP_OUTPUT_DIR=/output\n');
chmodSync(scratch, 0o755);
const image = runner.config.imagePython;
const command = ['python3', '/scraper/main.py'];

function timed(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

const bare = () => {
  const r = spawnSync('podman', [
    'run',
    '--rm',
    '-v',
    `${code}:/scraper:ro`,
    '-v',
    `${out}:/output:rw,U`,
    '-e',
    'CHRONOMAP_OUTPUT_DIR=/output',
    image,
    ...command,
  ]);
  if (r.status !== 0) throw new Error(`bare podman run failed: ${r.stderr}`);
};
const sandboxed = () => {
  rmSync(join(scratch, 'cid'), { force: true });
  const args = podmanRunArgs({
    name: `chronomap-bench-${randomUUID()}`,
    instanceLabel: 'bench',
    image,
    command,
    codeDir: code,
    outputDir: out,
    tmpDir: undefined,
    envFile: join(scratch, 'env'),
    owner: 'bench',
    hardTimeoutSecs: 600,
    memoryMb: runner.config.defaultMemoryMb,
    cpus: runner.config.cpus,
    maxOutputBytes: runner.config.maxOutputSizeMb * 1024 * 1024,
    network: runner.config.network,
    dnsServers: runner.config.dnsServers,
    seccompProfile: runner.config.seccompProfile,
    cidFile: join(scratch, 'cid'),
    disableIpv6: hostHasIpv6(),
  });
  const r = spawnSync('podman', args);
  if (r.status !== 0) throw new Error(`sandboxed podman run failed: ${r.stderr}`);
};

const figures = { api: [] as number[], bare: [] as number[], sandboxed: [] as number[] };
// One warm-up of each, not counted: the first start pays for page cache and image layers.
bare();
sandboxed();
await postRun(runner.url, {
  run_id: randomUUID(),
  runtime: 'python',
  entrypoint: 'main.py',
  code: { 'main.py': TRIVIAL_SCRAPER },
});
for (let i = 0; i < iterations; i++) {
  figures.bare.push(timed(bare));
  figures.sandboxed.push(timed(sandboxed));
  const start = performance.now();
  const r = await postRun(runner.url, {
    run_id: randomUUID(),
    runtime: 'python',
    entrypoint: 'main.py',
    code: { 'main.py': TRIVIAL_SCRAPER },
  });
  figures.api.push(performance.now() - start);
  if (r.json.status !== 'success') throw new Error(`run failed: ${JSON.stringify(r.json)}`);
}
await runner.app.close();
rmSync(scratch, { recursive: true, force: true });
rmSync(runner.dataDir, { recursive: true, force: true });

const median = (v: number[]) => quantile(v, 0.5);
console.log(
  `runner latency bench: ${iterations} iterations each, trivial Python scraper, image ${image}, load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(
  `  bare podman run            median ${ms(median(figures.bare))}  p90 ${ms(quantile(figures.bare, 0.9))}`,
);
console.log(
  `  sandboxed podman run       median ${ms(median(figures.sandboxed))}  p90 ${ms(quantile(figures.sandboxed, 0.9))}  (the runner's flags, no HTTP, no workspace)`,
);
console.log(
  `  POST /run                  median ${ms(median(figures.api))}  p90 ${ms(quantile(figures.api, 0.9))}   target <= 1500 ms`,
);
console.log(
  `  overhead over bare         ${ms(median(figures.api) - median(figures.bare))}   target <= 300 ms`,
);
console.log(
  `  overhead over sandboxed    ${ms(median(figures.api) - median(figures.sandboxed))}  (HTTP, workspace, output checks)`,
);

// The host side of the sandbox under attack (issue 17), measured against the runner command as
// deployed (bin/chronomap-runner.js in a process of its own, so its RSS and CPU are its own):
//   1. output flood: 4 writers ignoring SIGTERM, 1 MB blocks into new files: peak bytes of the
//      run's /output on the host against the cap;
//   2. a 300,000-file flood: files created before ENOSPC, and how long until then;
//   3. a symlink to / planted in a running scraper's /output: the run's end, the runner's CPU
//      and RSS against a baseline run that sleeps as long;
//   4. a 99 MB CSV: the runner's RSS after it answered (and its peak), the answer streamed;
//   5. kill -9 of the runner mid-run: containers and workspaces left 30 s after a restart.
//   6. a stdout flood (issue 34): host CPU-seconds (runner, podman, conmon; not the container's
//      own) per second of flood, the old carrying path (log-flood.ts, a copy of it) against the
//      runner's cap at the source (LOG_LIMIT), each less a quiet run of the same length.
//
//   npm run bench:host-caps -w runner [-- 6 ...]     (root, podman, the images, the sandbox network;
//                                                     numbers: only those sections)
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileFlood, outputFlood, peakOutputBytes, plantRootLink } from '../../runner/test/support/attacks.ts';
import { API_KEY } from './common.ts';
import { cpuSeconds, floodSource, followConmon } from './log-flood.ts';

const bin = fileURLToPath(new URL('../../runner/bin/chronomap-runner.js', import.meta.url));
const MB = 1024 * 1024;
const CAP_MB = 100;
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (msecs: number) => new Promise((resolve) => setTimeout(resolve, msecs));

interface Runner {
  child: ChildProcess;
  url: string;
  exited: Promise<unknown>;
}

async function startRunner(dataDir: string): Promise<Runner> {
  const child = spawn(bin, {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      SCRAPER_API_KEY: API_KEY,
      SCRAPER_PORT: '0',
      SCRAPER_HOST: '127.0.0.1',
      SCRAPER_DATA_DIR: dataDir,
      SCRAPER_MAX_OUTPUT_SIZE_MB: String(CAP_MB),
      NODE_ENV: 'production',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let log = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      log += chunk;
      const m = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(log);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', () => reject(new Error(`runner exited: ${log}`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, exited };
}

/** VmRSS and VmHWM (peak) of a process, in MB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function post(
  url: string,
  body: object,
): Promise<{ json?: Record<string, unknown>; bytes: number; tail: string }> {
  const response = await fetch(`${url}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ run_id: randomUUID(), runtime: 'python', entrypoint: 'main.py', ...body }),
  });
  // Read as a stream: the 99 MB answer is counted, not parsed; smaller ones (up to 8 MB, such as
  // two 1 MB logs) are parsed whole.
  let bytes = 0;
  let head = '';
  let tail = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body ?? []) {
    bytes += chunk.length;
    const text = decoder.decode(chunk, { stream: true });
    if (head.length < 8 * MB) head += text;
    tail = (tail + text).slice(-64);
  }
  const json = bytes < 8 * MB ? (JSON.parse(head) as Record<string, unknown>) : undefined;
  return { json, bytes, tail };
}

const py = (source: string, limits?: object) => ({
  code: { 'main.py': source },
  ...(limits ? { limits } : {}),
});

const only = process.argv.slice(2).map(Number);
const want = (section: number) => only.length === 0 || only.includes(section);
const dataDir = mkdtempSync(join(tmpdir(), 'chronomap-bench-caps-'));
let runner = await startRunner(dataDir);
const pid = () => runner.child.pid as number;
say(`runner pid ${pid()}, output cap ${CAP_MB} MB, file cap 1000 (defaults), ${new Date().toISOString()}`);

// 1. Output flood.
if (want(1)) {
  const { result, peak } = await peakOutputBytes(dataDir, post(runner.url, py(outputFlood(CAP_MB))));
  say(
    `1. output flood: peak ${(peak / MB).toFixed(2)} MB on the host for a cap of ${CAP_MB} MB (limit cap + 1 MB = ${CAP_MB + 1} MB); run ${result.json?.status} ${result.json?.code} in ${result.json?.duration_ms} ms`,
  );
}

// 2. File flood.
if (want(2)) {
  const { json } = await post(runner.url, py(fileFlood));
  say(
    `2. 300,000-file flood: ${String(json?.stderr).trim()}; run ${json?.status} ${json?.code} in ${json?.duration_ms} ms (${json?.error})`,
  );
}

// 3. Symlink walk, against a baseline run sleeping as long.
if (want(3)) {
  const sleeper = py('import time\ntime.sleep(20)\n', { timeout_secs: 10 });
  // Over the same 11 s window from the request: the attacked run ends early, the walk (if any)
  // would go on.
  const measure = async (plant: boolean) => {
    const began = Date.now();
    const cpu0 = cpuSeconds(pid());
    const mem0 = memory(pid()).rss;
    const running = post(runner.url, sleeper);
    if (plant && !(await plantRootLink(dataDir))) throw new Error('no run to plant a link in');
    let peakRss = mem0;
    let finished = false;
    void running.then(() => (finished = true));
    while (!finished || Date.now() - began < 11_000) {
      peakRss = Math.max(peakRss, memory(pid()).rss);
      await sleep(50);
    }
    const { json } = await running;
    return { json, cpu: cpuSeconds(pid()) - cpu0, rss: peakRss - mem0 };
  };
  const baseline = await measure(false);
  const attack = await measure(true);
  say(
    `3. symlink to / planted in /output: run ${attack.json?.status} ${attack.json?.code} after ${attack.json?.duration_ms} ms; runner CPU ${attack.cpu.toFixed(2)} s, peak RSS +${attack.rss.toFixed(1)} MB over 11 s; baseline run (timeout at 10 s): ${baseline.json?.code} after ${baseline.json?.duration_ms} ms, CPU ${baseline.cpu.toFixed(2)} s, peak RSS +${baseline.rss.toFixed(1)} MB over 11 s`,
  );
}

// 4. A 99 MB CSV.
if (want(4)) {
  const before = memory(pid());
  const { bytes, tail } = await post(
    runner.url,
    py(
      `
row = "2026-05-01,Concert in the park,Berlin,52.52,13.40\\n"
with open("/output/data.csv", "w") as f:
    f.write("date,title,city,lat,lon\\n")
    written = 0
    while written < 99 * 1024 * 1024 - len(row):
        f.write(row * 1000); written += len(row) * 1000
`,
      { memory_mb: 1024 },
    ),
  );
  await sleep(1000);
  const after = memory(pid());
  say(
    `4. 99 MB CSV: answer ${(bytes / MB).toFixed(1)} MB streamed (ends ${JSON.stringify(tail.slice(-3))}); runner RSS ${before.rss.toFixed(0)} MB before, ${after.rss.toFixed(0)} MB after, peak ${after.peak.toFixed(0)} MB`,
  );
}

// 5. kill -9 of the runner mid-run.
if (want(5)) {
  const running = post(runner.url, py('import time\ntime.sleep(300)\n')).catch(() => undefined);
  while (
    !spawnSync('podman', ['ps', '--format', '{{.Names}}'], { encoding: 'utf8' }).stdout.includes(
      'chronomap-run-',
    )
  )
    await sleep(50);
  runner.child.kill('SIGKILL');
  await runner.exited;
  await running;
  const left = () => ({
    containers: spawnSync('podman', ['ps', '-a', '--format', '{{.Names}}'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((n) => n.startsWith('chronomap-run-')).length,
    workspaces: readdirSync(dataDir).length,
  });
  const afterKill = left();
  const restartedAt = Date.now();
  runner = await startRunner(dataDir);
  const listenMs = Date.now() - restartedAt;
  const atListen = left();
  await sleep(30_000 - (Date.now() - restartedAt));
  const at30 = left();
  say(
    `5. kill -9 mid-run: ${afterKill.containers} container(s), ${afterKill.workspaces} workspace(s) left; restarted runner listening after ${listenMs} ms: ${atListen.containers} / ${atListen.workspaces}; 30 s after the restart: ${at30.containers} container(s), ${at30.workspaces} workspace(s)`,
  );
}

// 6. stdout flood: host CPU per second of flood, before (carried) and after (capped at the source).
if (want(6)) {
  const FLOOD_SECS = 10;
  const logFlood = fileURLToPath(new URL('./log-flood.ts', import.meta.url));
  const carried = async (kind: 'flood' | 'quiet') => {
    const name = `chronomap-bench-${randomUUID()}`;
    const conmon = followConmon(name);
    const child = spawn(process.execPath, [logFlood, kind, String(FLOOD_SECS), name], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c));
    await new Promise((resolve) => child.on('close', resolve));
    return (JSON.parse(out) as { cpu: number }).cpu + (await conmon.stop());
  };
  const capped = async (kind: 'flood' | 'quiet') => {
    const runId = randomUUID();
    const conmon = followConmon(`chronomap-run-${runId}`);
    const cpu0 = cpuSeconds(pid(), true);
    const { json } = await post(runner.url, {
      run_id: runId,
      ...py(floodSource(kind, FLOOD_SECS), { timeout_secs: FLOOD_SECS + 30 }),
    });
    const conmonCpu = await conmon.stop();
    return { cpu: cpuSeconds(pid(), true) - cpu0 + conmonCpu, code: json?.code, ms: json?.duration_ms };
  };
  const before = { flood: await carried('flood'), quiet: await carried('quiet') };
  const after = { flood: await capped('flood'), quiet: await capped('quiet') };
  const perSec = (flood: number, quiet: number) => ((flood - quiet) / FLOOD_SECS).toFixed(3);
  say(
    `6. stdout flood of ${FLOOD_SECS} s, host CPU outside the container: before (carried, dropped in the runner) ${before.flood.toFixed(2)} s against ${before.quiet.toFixed(2)} s for a quiet run = ${perSec(before.flood, before.quiet)} CPU-s per flood-second; after (capped at the source) ${after.flood.cpu.toFixed(2)} s (run ${after.flood.code} after ${after.flood.ms} ms) against ${after.quiet.cpu.toFixed(2)} s quiet = ${perSec(after.flood.cpu, after.quiet.cpu)} CPU-s per flood-second`,
  );
}

runner.child.kill('SIGTERM');
await runner.exited;
rmSync(dataDir, { recursive: true, force: true });

// Host CPU of a stdout flood (issue 34, host-caps.ts section 6). Run as a script it is the
// runner's old path, copied: one `podman run` whose stdout and stderr are carried to the end and
// dropped past the cap in the runner (CappedText), which is what the runner did before it closed
// the stream at the cap. It prints the CPU-seconds of its own process and of the children it
// reaped (podman); the caller adds conmon's (followConmon).
//
//   node bench/runner/log-flood.ts <flood|quiet> <seconds> <container name>
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../runner/src/config.ts';
import { workspaceCaps, workspaceSpec } from '../../runner/src/run-manager.ts';
import { CappedText } from '../../runner/src/sandbox/capped-text.ts';
import { podmanRunArgs } from '../../runner/src/sandbox/podman-args.ts';
import { createWorkspace, removeWorkspace, writeEnvFile } from '../../runner/src/workspace.ts';

/** A scraper writing to stdout as fast as it can for `seconds`, or sleeping as long. */
export function floodSource(kind: 'flood' | 'quiet', seconds: number): string {
  return kind === 'flood'
    ? `import sys, time\nend = time.time() + ${seconds}\nblock = "x" * 65536\nwhile time.time() < end:\n    sys.stdout.write(block)\n`
    : `import time\ntime.sleep(${seconds})\n`;
}

/** CPU seconds (user + system) of a process, with its reaped children's when `children`. */
export function cpuSeconds(pid: number | 'self', children = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const field = (n: number) => Number(fields[n] ?? 0);
  const own = field(11) + field(12);
  return (children ? own + field(13) + field(14) : own) / 100;
}

/** The pid of the conmon of container `name` (its command line names it), or 0. */
function conmonPid(name: string): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('conmon') && argv.includes(name)) return Number(entry);
    } catch {
      // ended meanwhile
    }
  }
  return 0;
}

/**
 * Follows the conmon of container `name` until it ends: its CPU seconds at the last look
 * (conmon is reparented to init, so nobody's children count holds it). Run it in a process
 * other than the one measured: the polling costs CPU too.
 */
export function followConmon(name: string): { stop(): Promise<number> } {
  let pid = 0;
  let last = 0;
  let done = false;
  const look = () => {
    if (pid === 0) pid = conmonPid(name);
    if (pid !== 0) last = cpuSeconds(pid); // throws once conmon is gone
  };
  const looking = (async () => {
    for (; !done; await new Promise((resolve) => setTimeout(resolve, 20))) {
      try {
        look();
      } catch {
        return; // conmon ended: `last` is its figure within 20 ms of its end
      }
    }
  })();
  return {
    async stop() {
      await Promise.race([looking, new Promise((resolve) => setTimeout(resolve, 3000))]);
      done = true;
      await looking;
      return last;
    },
  };
}

async function carryOld(kind: 'flood' | 'quiet', seconds: number, name: string): Promise<void> {
  const config = loadConfig({ SCRAPER_API_KEY: 'bench-key-0123456789abcdef' });
  const workspace = await createWorkspace(config.dataDir, `bench-${randomUUID()}`, workspaceCaps(config));
  try {
    await writeEnvFile(workspace.envFile, {});
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${workspace.codeDir}/main.py`, floodSource(kind, seconds), { mode: 0o644 });
    const args = podmanRunArgs({
      name,
      instanceLabel: 'bench',
      image: config.imagePython,
      command: ['python3', '/scraper/main.py'],
      ...workspaceSpec(config, workspace),
      hardTimeoutSecs: seconds + 30,
      memoryMb: 512,
    });
    const cpu0 = cpuSeconds('self', true);
    const child = spawn(config.podmanPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout = new CappedText(config.maxLogBytes);
    const stderr = new CappedText(config.maxLogBytes);
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    await new Promise((resolve) => child.on('close', resolve));
    process.stdout.write(
      `${JSON.stringify({ cpu: cpuSeconds('self', true) - cpu0, kept: stdout.text().length })}\n`,
    );
  } finally {
    await removeWorkspace(workspace);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const kind = process.argv[2] === 'quiet' ? 'quiet' : 'flood';
  await carryOld(kind, Number(process.argv[3] ?? 10), process.argv[4] ?? `chronomap-bench-${randomUUID()}`);
}

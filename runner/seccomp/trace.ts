// Measures the system calls scrapers make, to keep runner/seccomp.json an allow-list of what is
// used. Runs each scraper of runner/seccomp/scrapers/ through the runner's own `podman run`
// command line (podmanRunArgs, the real workspace and mounts) under `strace -ff`, keeps the
// calls of the container's processes (from the container init's execve on, and every
// descendant), and prints, per scraper and in all, the calls and the socket families used,
// then what the profile allows that no scraper used and what a scraper tried that it refuses.
//
//   npx node runner/seccomp/trace.ts [--profile path] [--json out.json]
// Needs root, podman, strace (apt-get install strace) and the runner images.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config.ts';
import { workspaceCaps, workspaceSpec } from '../src/run-manager.ts';
import { podmanRunArgs } from '../src/sandbox/podman-args.ts';
import { createWorkspace, makeReadable, removeWorkspace, writeEnvFile } from '../src/workspace.ts';

const say = (line: string) => process.stdout.write(`${line}\n`);
const { values } = parseArgs({
  options: { profile: { type: 'string' }, json: { type: 'string' }, keep: { type: 'boolean' } },
});
const here = fileURLToPath(new URL('.', import.meta.url));
const scrapersDir = process.env.TRACE_SCRAPERS ?? join(here, 'scrapers');
const config = loadConfig({
  SCRAPER_API_KEY: 'trace-0123456789abcdef',
  SCRAPER_DATA_DIR: mkdtempSync(join(tmpdir(), 'chronomap-trace-')),
  ...(values.profile ? { SCRAPER_SECCOMP_PROFILE: values.profile } : {}),
});

interface Trace {
  calls: Map<string, number>;
  refused: Set<string>;
  families: Set<string>;
  exitCode: number | null;
}

/** Syscalls of the container's processes in a `strace -ff -o prefix` output. */
function containerCalls(dir: string): Trace {
  const files = new Map<number, string[]>();
  for (const name of readdirSync(dir)) {
    const pid = Number(name.split('.').pop());
    files.set(pid, readFileSync(join(dir, name), 'utf8').split('\n'));
  }
  // The container's init is the process that execs /run/podman-init (podman's --init, catatonit).
  const roots = [...files].filter(([, lines]) =>
    lines.some((l) => l.startsWith('execve("/run/podman-init"')),
  );
  const trace: Trace = { calls: new Map(), refused: new Set(), families: new Set(), exitCode: null };
  const queue = roots.map(([pid]) => ({ pid, fromExec: true }));
  const seen = new Set<number>();
  while (queue.length > 0) {
    const { pid, fromExec } = queue.shift() as { pid: number; fromExec: boolean };
    if (seen.has(pid)) continue;
    seen.add(pid);
    let counting = !fromExec;
    for (const line of files.get(pid) ?? []) {
      // runc installs the filter shortly before it execs the init, and makes a few calls of its
      // own under it (they must be allowed too): count from there.
      if (!counting) {
        if (/^(?:seccomp\(SECCOMP_SET_MODE_FILTER|prctl\(PR_SET_SECCOMP).*filter=.*= 0$/.test(line))
          counting = true;
        else continue;
      }
      const call = /^(?:<\.\.\. )?([a-z0-9_]+)[( ]/.exec(line)?.[1];
      if (!call) continue;
      trace.calls.set(call, (trace.calls.get(call) ?? 0) + 1);
      if (/= -1 EPERM|= -1 ENOSYS/.test(line) && !line.includes('resumed')) trace.refused.add(call);
      const family = /^socket\((AF_[A-Z0-9]+)/.exec(line)?.[1];
      if (family) trace.families.add(family);
      // --decode-pids=pidns: "= 6 /* 18189 in strace's PID NS */", the container's pid, then ours.
      const child = /^(?:clone3?|fork|vfork)\(.*= \d+ \/\* (\d+) in strace's PID NS \*\/$/.exec(line)?.[1];
      if (child) queue.push({ pid: Number(child), fromExec: false });
    }
  }
  return trace;
}

function traceScraper(file: string): Promise<Trace> {
  return (async () => {
    const runtime = file.endsWith('.py') ? 'python' : 'node';
    const entry = runtime === 'python' ? 'main.py' : 'main.mjs';
    const workspace = await createWorkspace(config.dataDir, `trace-${randomUUID()}`, workspaceCaps(config));
    const traces = mkdtempSync(join(tmpdir(), 'chronomap-strace-'));
    try {
      copyFileSync(join(scrapersDir, file), join(workspace.codeDir, entry));
      await makeReadable(workspace.codeDir);
      await writeEnvFile(workspace.envFile, {
        CHRONOMAP_OUTPUT_DIR: '/output',
        CHRONOMAP_OUTPUT_FILE: 'data.csv',
      });
      const args = podmanRunArgs({
        name: `chronomap-trace-${randomUUID()}`,
        instanceLabel: 'trace',
        image: runtime === 'python' ? config.imagePython : config.imageNode,
        command: runtime === 'python' ? ['python3', `/scraper/${entry}`] : ['node', `/scraper/${entry}`],
        ...workspaceSpec(config, workspace),
        hardTimeoutSecs: 120,
        memoryMb: config.defaultMemoryMb,
      });
      const run = spawnSync(
        'strace',
        ['-ff', '-qq', '--decode-pids=pidns', '-o', join(traces, 't'), config.podmanPath, ...args],
        {
          encoding: 'utf8',
        },
      );
      const trace = containerCalls(traces);
      trace.exitCode = run.status;
      if (run.status !== 0) process.stderr.write(`${file}: exit ${run.status}\n${run.stdout}${run.stderr}\n`);
      return trace;
    } finally {
      if (values.keep) say(`${file}: strace output kept in ${traces}`);
      else rmSync(traces, { recursive: true, force: true });
      await removeWorkspace(workspace);
    }
  })();
}

const profile = JSON.parse(readFileSync(config.seccompProfile, 'utf8')) as {
  syscalls: Array<{ names: string[]; action: string }>;
};
const allowed = new Set(
  profile.syscalls.filter((s) => s.action === 'SCMP_ACT_ALLOW').flatMap((s) => s.names),
);
const union = new Map<string, number>();
const families = new Set<string>();
const refused = new Set<string>();
const perScraper: Record<
  string,
  { calls: string[]; refused: string[]; families: string[]; exitCode: number | null }
> = {};
for (const file of readdirSync(scrapersDir).sort()) {
  const trace = await traceScraper(file);
  for (const [call, n] of trace.calls) union.set(call, (union.get(call) ?? 0) + n);
  for (const f of trace.families) families.add(f);
  for (const r of trace.refused) refused.add(r);
  perScraper[file] = {
    calls: [...trace.calls.keys()].sort(),
    refused: [...trace.refused].sort(),
    families: [...trace.families].sort(),
    exitCode: trace.exitCode,
  };
  say(
    `${file}: exit ${trace.exitCode}, ${trace.calls.size} calls, refused: ${[...trace.refused].sort().join(' ') || 'none'}`,
  );
}
rmSync(config.dataDir, { recursive: true, force: true });
const used = [...union.keys()].sort();
say(`\nused by any scraper (${used.length}): ${used.join(' ')}`);
say(`socket families: ${[...families].sort().join(' ')}`);
say(`tried and refused by the profile: ${[...refused].sort().join(' ') || 'none'}`);
say(
  `allowed (${allowed.size}) but never used: ${[...allowed]
    .filter((c) => !union.has(c))
    .sort()
    .join(' ')}`,
);
say(`used but not allowed: ${used.filter((c) => !allowed.has(c)).join(' ') || 'none'}`);
if (values.json)
  writeFileSync(
    values.json,
    `${JSON.stringify({ used, families: [...families].sort(), perScraper }, null, 2)}\n`,
  );

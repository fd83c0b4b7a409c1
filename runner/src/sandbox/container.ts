// Runs one scraper container and reports how it ended.
//
// The container is created and then started (`podman create`, `podman start --attach`) rather
// than `podman run` in one go, because podman 4.3 (Debian bookworm) can deadlock when it
// allocates a --userns=auto range while another podman process changes the storage
// (containers/storage lock-order bug, fixed in podman 4.4). Creation is therefore serialised
// within this process and watched: a create that hangs is killed, which releases its locks,
// and tried once more.
//
// Stopping escalates: `podman stop` (SIGTERM, then SIGKILL after 2 s; repeated while the
// container is still starting), then `podman kill`, then `podman rm -f`, so that a run always
// ends and never leaves its container behind.
import { spawn } from 'node:child_process';
import { CappedText } from './capped-text.ts';
import { type SandboxSpec, podmanCreateArgs } from './podman-args.ts';
import { killGroup } from '../process-group.ts';

export type StopReason = 'timeout' | 'stopped' | 'output-too-large' | 'shutdown';

export interface ContainerResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  stopReason: StopReason | undefined;
  /** podman itself failed: the sandbox could not be set up. */
  engineError: string | undefined;
}

export interface RunningContainer {
  result: Promise<ContainerResult>;
  /** Resolves when the container is created and about to start (the scraper's clock starts). */
  started: Promise<void>;
  stop(reason: StopReason): void;
}

const COMMAND_TIMEOUT_MS = 30_000;

/** Runs a podman command to completion, killed if it hangs past `timeoutMs`. */
export function podmanCommand(
  podman: string,
  args: string[],
  timeoutMs = COMMAND_TIMEOUT_MS,
): Promise<{ code: number; stdout: string; stderr: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(podman, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: err.message, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout, stderr, timedOut });
    });
  });
}

let createQueue: Promise<unknown> = Promise.resolve();

/** One `podman create` at a time in this process (see the note at the top). */
function serialised<T>(task: () => Promise<T>): Promise<T> {
  const next = createQueue.then(task, task);
  createQueue = next.catch(() => undefined);
  return next;
}

async function createContainer(
  podman: string,
  spec: SandboxSpec,
  timeoutMs: number,
): Promise<string | undefined> {
  const args = podmanCreateArgs(spec);
  let last = '';
  for (let attempt = 1; attempt <= 2; attempt++) {
    const created = await serialised(() => podmanCommand(podman, args, timeoutMs));
    if (created.code === 0) return undefined;
    if (!created.timedOut) return created.stderr.trim() || `podman create exited with ${created.code}`;
    last = `podman create did not finish within ${timeoutMs / 1000} s (killed after ${attempt} attempts)`;
  }
  return last;
}

export interface ContainerOptions {
  podman: string;
  maxLogBytes: number;
  createTimeoutMs: number;
}

export function startContainer(spec: SandboxSpec, options: ContainerOptions): RunningContainer {
  const { podman, maxLogBytes } = options;
  let stopReason: StopReason | undefined;
  let attached: ReturnType<typeof spawn> | undefined;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const timers: NodeJS.Timeout[] = [];

  const stop = (reason: StopReason) => {
    if (stopReason !== undefined) return;
    stopReason = reason;
    // Repeated because the container may not exist yet when the stop comes during start-up.
    const attempt = () => void podmanCommand(podman, ['stop', '--ignore', '--time', '2', spec.name]);
    attempt();
    timers.push(setInterval(attempt, 1_000));
    timers.push(setTimeout(() => void podmanCommand(podman, ['kill', spec.name]), 8_000));
    timers.push(setTimeout(() => void podmanCommand(podman, ['rm', '-f', '--ignore', spec.name]), 12_000));
    timers.push(setTimeout(() => attached && killGroup(attached), 20_000));
  };

  const result = (async (): Promise<ContainerResult> => {
    const createError = await createContainer(podman, spec, options.createTimeoutMs);
    if (createError !== undefined) {
      await podmanCommand(podman, ['rm', '-f', '--ignore', spec.name]);
      return { exitCode: -1, stdout: '', stderr: '', stopReason, engineError: createError };
    }
    if (stopReason !== undefined) {
      for (const t of timers) clearTimeout(t);
      await podmanCommand(podman, ['rm', '-f', '--ignore', spec.name]);
      return { exitCode: -1, stdout: '', stderr: '', stopReason, engineError: undefined };
    }
    const stdout = new CappedText(maxLogBytes);
    const stderr = new CappedText(maxLogBytes);
    markStarted();
    const child = spawn(podman, ['start', '--attach', spec.name], {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    attached = child;
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    const { code, signal, spawnError } = await new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
      spawnError?: Error;
    }>((resolve) => {
      child.on('error', (err) => resolve({ code: null, signal: null, spawnError: err }));
      child.on('close', (c, s) => resolve({ code: c, signal: s }));
    });
    for (const t of timers) clearTimeout(t); // clearTimeout clears intervals too
    if (spawnError)
      return {
        exitCode: -1,
        stdout: '',
        stderr: '',
        stopReason,
        engineError: `cannot run ${podman}: ${spawnError.message}`,
      };
    const exitCode = code ?? (signal ? 128 : -1);
    const errText = stderr.text();
    // 125 is podman's own failure; a scraper could exit 125 itself, but then podman would not
    // have printed an "Error:" line of its own.
    const engineError = exitCode === 125 && /^Error: /m.test(errText) ? errText.trim() : undefined;
    // --rm normally removes it; not when it was killed from outside or podman failed.
    if (stopReason !== undefined || engineError !== undefined)
      await podmanCommand(podman, ['rm', '-f', '--ignore', spec.name]);
    return { exitCode, stdout: stdout.text(), stderr: errText, stopReason, engineError };
  })();
  return { result, started, stop };
}

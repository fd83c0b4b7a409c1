// Runs one scraper container and reports how it ended.
//
// One `podman run --cidfile` per run (a second podman process, `create` then `start`, cost
// about 100 ms more). podman 4.3 (Debian bookworm) can deadlock when it allocates a
// --userns=auto range while another podman process changes the storage (containers/storage
// lock-order bug, fixed in podman 4.4). Container creation is therefore serialised within
// this process: the next `podman run` is launched only once the previous one has written its
// cid file (podman writes it right after creating the container, before starting it) or has
// ended. Creation is also watched: a `podman run` that has not created its container within
// the create timeout is killed, which releases its locks, and tried once more.
//
// Stopping escalates: `podman stop` (SIGTERM, then SIGKILL after 2 s; repeated while the
// container is still starting), then `podman kill`, then `podman rm -f`, so that a run always
// ends and never leaves its container behind. A passed cap skips the grace: `podman kill`.
//
// stdout and stderr are capped at their source: once a stream has brought more than the log
// cap, the runner closes its end of that pipe (podman and conmon stop carrying the flood: a
// write to it fails) and kills the container; the run ends with LOG_LIMIT. Carrying a flood and
// dropping it in the runner cost the host about 0.56 CPU-seconds per second of flood
// (bench/runner/host-caps.ts, section 6).
import { type ChildProcess, spawn } from 'node:child_process';
import { stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { CappedText } from './capped-text.ts';
import { type SandboxSpec, podmanRunArgs } from './podman-args.ts';
import { killGroup } from '../process-group.ts';

export type StopReason =
  'timeout' | 'stopped' | 'shutdown' | 'output-too-large' | 'too-many-files' | 'output-link' | 'log-limit';

/** A cap was passed: the container is killed at once, without the SIGTERM grace. */
const KILL_AT_ONCE: ReadonlySet<StopReason> = new Set([
  'output-too-large',
  'too-many-files',
  'output-link',
  'log-limit',
]);

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

/** One container creation at a time in this process (see the note at the top). */
function serialised<T>(task: () => Promise<T>): Promise<T> {
  const next = createQueue.then(task, task);
  createQueue = next.catch(() => undefined);
  return next;
}

const CID_POLL_MS = 10;

interface Launched {
  child: ChildProcess;
  /** The child's end, as soon as it is known. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: Error }>;
  /** created: the cid file is there; exited: podman ended first; hung: killed at the create timeout. */
  outcome: 'created' | 'exited' | 'hung';
}

/** Starts `podman run` and waits until it has created the container (or ended, or hung). */
async function launch(
  podman: string,
  spec: SandboxSpec,
  timeoutMs: number,
  onData: (stream: 'stdout' | 'stderr', chunk: Buffer) => void,
  onSpawn: (child: ChildProcess) => void,
): Promise<Launched> {
  await unlink(spec.cidFile).catch(() => undefined); // podman refuses an existing cid file
  // The working directory is the run's workspace (the cid file's directory, removed after the
  // run): conmon writes an `oom` file into it when the container is killed for memory.
  const child = spawn(podman, podmanRunArgs(spec), {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    cwd: dirname(spec.cidFile),
  });
  onSpawn(child);
  child.stdout?.on('data', (c: Buffer) => onData('stdout', c));
  child.stderr?.on('data', (c: Buffer) => onData('stderr', c));
  let ended = false;
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: Error }>(
    (resolve) => {
      child.on('error', (err) => resolve({ code: null, signal: null, spawnError: err }));
      child.on('close', (code, signal) => resolve({ code, signal }));
    },
  ).finally(() => (ended = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await stat(spec.cidFile).catch(() => undefined))?.size) return { child, closed, outcome: 'created' };
    if (ended) return { child, closed, outcome: 'exited' };
    if (Date.now() >= deadline) {
      killGroup(child);
      await closed;
      return { child, closed, outcome: 'hung' };
    }
    await new Promise((resolve) => setTimeout(resolve, CID_POLL_MS));
  }
}

export interface ContainerOptions {
  podman: string;
  maxLogBytes: number;
  createTimeoutMs: number;
}

export function startContainer(spec: SandboxSpec, options: ContainerOptions): RunningContainer {
  const { podman, maxLogBytes } = options;
  let stopReason: StopReason | undefined;
  let attached: ChildProcess | undefined;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const timers: NodeJS.Timeout[] = [];

  const stop = (reason: StopReason) => {
    if (stopReason !== undefined) return;
    stopReason = reason;
    // Repeated because the container may not exist yet when the stop comes during start-up.
    const attempt = KILL_AT_ONCE.has(reason)
      ? () => void podmanCommand(podman, ['kill', spec.name])
      : () => void podmanCommand(podman, ['stop', '--ignore', '--time', '2', spec.name]);
    attempt();
    timers.push(setInterval(attempt, 1_000));
    timers.push(setTimeout(() => void podmanCommand(podman, ['kill', spec.name]), 8_000));
    timers.push(setTimeout(() => void podmanCommand(podman, ['rm', '-f', '--ignore', spec.name]), 12_000));
    timers.push(setTimeout(() => attached && killGroup(attached), 20_000));
  };

  const result = (async (): Promise<ContainerResult> => {
    const stdout = new CappedText(maxLogBytes);
    const stderr = new CappedText(maxLogBytes);
    const onData = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
      if (!(stream === 'stdout' ? stdout : stderr).push(chunk)) return;
      // Past the cap: stop carrying the stream at all, and end the run.
      attached?.[stream]?.destroy();
      stop('log-limit');
    };
    const onSpawn = (child: ChildProcess) => (attached = child);
    let launched: Launched | undefined;
    for (let attempt = 1; attempt <= 2; attempt++) {
      // A run stopped while it waited for its turn is not started at all.
      launched = await serialised(async () =>
        stopReason === undefined ? launch(podman, spec, options.createTimeoutMs, onData, onSpawn) : undefined,
      );
      if (launched?.outcome !== 'hung') break;
    }
    if (launched === undefined || launched.outcome === 'hung') {
      for (const t of timers) clearTimeout(t);
      await podmanCommand(podman, ['rm', '-f', '--ignore', spec.name]);
      const engineError =
        stopReason === undefined
          ? `podman did not create the container within ${options.createTimeoutMs / 1000} s (killed after 2 attempts)`
          : undefined;
      return { exitCode: -1, stdout: '', stderr: '', stopReason, engineError };
    }
    if (launched.outcome === 'created') markStarted();
    const { code, signal, spawnError } = await launched.closed;
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

// Runs one scraper container and reports how it ended. Stopping escalates: `podman stop`
// (SIGTERM, then SIGKILL after 2 s), then `podman kill`, then `podman rm -f`, so that a run
// always ends and never leaves its container behind.
import { spawn } from 'node:child_process';
import { CappedText } from './capped-text.ts';
import { type SandboxSpec, podmanRunArgs } from './podman-args.ts';
import { killGroup } from '../process-group.ts';

export type StopReason = 'timeout' | 'stopped' | 'output-too-large' | 'shutdown';

export interface ContainerResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  stopReason: StopReason | undefined;
  /** podman itself failed (exit 125 with its own error): the sandbox could not be set up. */
  engineError: string | undefined;
}

export interface RunningContainer {
  result: Promise<ContainerResult>;
  stop(reason: StopReason): void;
}

export function podmanCommand(podman: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(podman, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', (err) => resolve({ code: -1, stderr: err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

export function startContainer(podman: string, spec: SandboxSpec, maxLogBytes: number): RunningContainer {
  const child = spawn(podman, podmanRunArgs(spec), { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const stdout = new CappedText(maxLogBytes);
  const stderr = new CappedText(maxLogBytes);
  child.stdout.on('data', (c: Buffer) => stdout.push(c));
  child.stderr.on('data', (c: Buffer) => stderr.push(c));
  let stopReason: StopReason | undefined;
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
    timers.push(setTimeout(() => killGroup(child), 20_000));
  };

  const result = new Promise<ContainerResult>((resolve) => {
    child.on('error', (err) => resolve({ exitCode: -1, stdout: '', stderr: '', stopReason, engineError: `cannot run ${podman}: ${err.message}` }));
    child.on('close', async (code, signal) => {
      for (const t of timers) clearTimeout(t); // clearTimeout clears intervals too
      const exitCode = code ?? (signal ? 128 : -1);
      const errText = stderr.text();
      // 125 is podman's own failure; a scraper could exit 125 itself, but then podman would
      // not have printed an "Error:" line of its own.
      const engineError = exitCode === 125 && /^Error: /m.test(errText) ? errText.trim() : undefined;
      if (stopReason !== undefined) {
        // --rm may not have happened when the container was killed from outside.
        await podmanCommand(podman, ['rm', '-f', '--ignore', spec.name]);
      }
      resolve({ exitCode, stdout: stdout.text(), stderr: errText, stopReason, engineError });
    });
  });
  return { result, stop };
}

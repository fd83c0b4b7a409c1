import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import type { Test } from 'tap';

/** Sends `signal` to a child that is still running and waits until it has exited. */
export async function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

/**
 * Starts a server binary for the test (HAProxy, Prometheus): what it prints on stderr is kept for
 * error messages; at teardown it is SIGKILLed and its working directory `dir` removed.
 */
export function spawnServer(
  t: Test,
  command: string,
  args: string[],
  options: { dir: string; detached?: boolean },
): { child: ChildProcess; stderr(): string } {
  const child = spawn(command, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(options.detached ? { detached: true } : {}),
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
  });
  t.teardown(async () => {
    await stopProcess(child, 'SIGKILL');
    rmSync(options.dir, { recursive: true, force: true });
  });
  return { child, stderr: () => stderr };
}

/** SIGKILL to the process group of a child spawned `detached`; resolves when the child has exited. */
export async function killProcessGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // already gone
  }
  await exited;
}

import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { Test } from 'tap';
import { projectRoot } from '../../src/adapters/config/environment.ts';

export const CLI = path.join(projectRoot, 'bin', 'chronomap');

export type CliResult = { code: number | null; stdout: string; stderr: string };

/** Runs `chronomap <args>` to completion with a clean environment plus `env`. */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = startCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export function startCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(CLI, args, {
    // One HTTP process unless a test asks for more (the default is one per core).
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      API_PROCESSES: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Waits until the child prints a line matching `pattern` on stdout; returns the match. */
export function waitForOutput(
  child: ChildProcess,
  pattern: RegExp,
  timeoutMs = 120_000,
): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern}; output so far:\n${seen}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = seen.match(pattern);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        resolve(match);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing ${pattern}; output:\n${seen}`));
    });
  });
}

/** A started `chronomap worker` and what it has printed on stdout so far (its log lines). */
export type RunningWorker = { child: ChildProcess; out: () => string };

/**
 * Starts `chronomap worker` with `env` and waits until it runs; the test's teardown SIGKILLs it if it
 * is still alive. The crash and SIGTERM tests of the ingest pipeline start theirs this way.
 */
export async function startWorker(t: Test, env: Record<string, string>): Promise<RunningWorker> {
  const child = startCli(['worker'], env);
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await waitForOutput(child, /chronomap worker running/);
  return { child, out: () => text };
}

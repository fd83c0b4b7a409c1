import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Test } from 'tap';
import { CLI, waitForOutput } from './cli.ts';
import { killProcessGroup } from './processes.ts';

// Chronomap processes started as if each ran on a host of its own: its own process group (killed
// as a whole, like a machine going away), its own data directory, no shared memory; what they share
// is what separate hosts would share: the database, and the ingest directory (uploaded files, on a
// shared volume in a real deployment: the API writes them, a worker reads them), here a symlink.

export type HostProcess = {
  name: string;
  /** The API port; 0 for a worker. */
  port: number;
  child: ChildProcess;
  /** SIGKILL to the whole process group; resolves when the process has exited. */
  kill(): Promise<void>;
};

export type HostOptions = {
  name: string;
  role: 'api' | 'worker';
  /** The API's port (chosen by the test, so HAProxy can be configured before it starts). */
  port?: number;
  /** Root of the "hosts": `<root>/<name>` is this one's data dir, `<root>/shared-ingest` the shared volume. */
  root: string;
  databaseUrl: string;
  env: Record<string, string>;
};

export async function startHost(t: Test, options: HostOptions): Promise<HostProcess> {
  const dataDir = path.join(options.root, options.name);
  const shared = path.join(options.root, 'shared-ingest');
  mkdirSync(shared, { recursive: true });
  mkdirSync(dataDir, { recursive: true });
  try {
    symlinkSync(shared, path.join(dataDir, 'ingest'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  // The process's database sessions carry its name, so the test can see which one does what.
  const url = new URL(options.databaseUrl);
  url.searchParams.set('application_name', options.name);
  const child = spawn(CLI, [options.role], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/root',
      API_PROCESSES: '1',
      HOST: '127.0.0.1',
      PORT: String(options.port ?? 0),
      CHRONOMAP_DATA_DIR: dataDir,
      DATABASE_URL: url.toString(),
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const kill = () => killProcessGroup(child);
  t.teardown(kill);
  await waitForOutput(child, options.role === 'api' ? /listening on http/ : /chronomap worker running/);
  // Keep reading so a chatty process never blocks on a full pipe.
  child.stdout?.resume();
  child.stderr?.resume();
  return { name: options.name, port: options.port ?? 0, child, kill };
}

export type Outcome = {
  /** When the request was sent and when it ended (ms since the epoch). */
  sentAt: number;
  endedAt: number;
  status: number;
  servedBy: string | null;
  error?: string;
};

export const failed = (o: Outcome): boolean => o.status === 0 || o.status >= 500;

/** One request on a real socket, optionally from a given local address (another "client machine"). */
export function request(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: Buffer;
    localAddress?: string;
    timeoutMs?: number;
  } = {},
): Promise<Outcome & { body: string }> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method: options.method ?? 'GET',
        headers: {
          ...options.headers,
          ...(options.body ? { 'content-length': String(options.body.length) } : {}),
        },
        localAddress: options.localAddress,
        timeout: options.timeoutMs ?? 30_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            sentAt,
            endedAt: Date.now(),
            status: response.statusCode ?? 0,
            servedBy: (response.headers['x-served-by'] as string | undefined) ?? null,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        response.on('error', (error) =>
          resolve({ sentAt, endedAt: Date.now(), status: 0, servedBy: null, error: error.message, body: '' }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', (error) =>
      resolve({ sentAt, endedAt: Date.now(), status: 0, servedBy: null, error: error.message, body: '' }),
    );
    req.end(options.body);
  });
}

/** `concurrency` loops of GETs over `paths` until stopped; every outcome is kept. */
export function readLoad(
  base: string,
  headers: Record<string, string>,
  paths: string[],
  concurrency: number,
): { outcomes: Outcome[]; stop(): Promise<Outcome[]> } {
  const outcomes: Outcome[] = [];
  let running = true;
  const loop = async (offset: number) => {
    for (let i = offset; running; i++) {
      const { body: _body, ...outcome } = await request(`${base}${paths[i % paths.length]}`, { headers });
      outcomes.push(outcome);
    }
  };
  const loops = Array.from({ length: concurrency }, (_, i) => loop(i));
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

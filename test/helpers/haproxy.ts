import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { spawnServer } from './processes.ts';

// A real HAProxy from Debian in front of processes on loopback: round robin with checks on
// /api/live, the answering server named in a response header, and its stats page (CSV) read to see
// when it marks a server down or up again.

export const HAPROXY = '/usr/sbin/haproxy';

export type Backend = { name: string; port: number };

export type Haproxy = {
  url: string;
  port: number;
  /** Server name -> HAProxy's status of it (`UP`, `DOWN`, `UP 1/2`, `no check`, ...). */
  status(): Promise<Record<string, string>>;
  /** Resolves with the time (ms) at which `server` was first seen with a status starting with `wanted`. */
  waitFor(server: string, wanted: 'UP' | 'DOWN', timeoutMs?: number): Promise<number>;
};

/** A free TCP port on 127.0.0.1 (free when asked: a process given it binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** API processes, or scraper runners (chronomap-runner). */
export type BackendKind = 'api' | 'runner';

// API processes: checked on /api/live (no database round trip), each check allowed 2 s, three
// failures in a row to go DOWN (docs/scaling.md says why).
const API_BALANCING = `  balance roundrobin
  option httpchk GET /api/live
  http-check expect status 200
  timeout check 2s
  http-request disable-l7-retry unless METH_GET
  default-server inter 1s fastinter 250ms downinter 1s fall 3 rise 2`;

// Runners: a run holds its POST /run open until it ends, so the server timeout is the longest run;
// new runs go to the runner with the fewest open runs; a run's later stop and status calls carry
// its id (X-Chronomap-Run-Id) and stick to the runner that took it. Nothing is replayed: a run
// sent twice would run twice.
const RUNNER_BALANCING = `  balance leastconn
  timeout server 2h
  option httpchk GET /health
  http-check expect status 200
  http-request disable-l7-retry
  stick-table type string len 64 size 100k expire 3h
  stick on req.hdr(x-chronomap-run-id)
  default-server inter 300ms fastinter 200ms downinter 300ms fall 2 rise 2`;

/**
 * The configuration: API processes checked every second (every 250 ms once a check failed), each
 * check allowed 2 s, DOWN after 3 failed checks in a row and UP after 2 good ones; runners checked
 * every 300 ms, DOWN after 2. A request whose connection is refused is retried on the other server (`redispatch`);
 * a GET or HEAD that got no answer at all (the process died holding it) is retried too, but never
 * another method: a POST the dead process may have committed (an upload) is not replayed, the client
 * gets the 502 (`disable-l7-retry`). The client address is set by HAProxy (any X-Forwarded-For the
 * client sent is dropped), so the API (TRUST_PROXY=true) counts anonymous rate limits per client.
 */
export function haproxyConfig(
  port: number,
  statsPort: number,
  backends: Backend[],
  kind: BackendKind = 'api',
): string {
  return `global
  maxconn 2000

defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout http-request 30s
  retries 3
  option redispatch 1
  retry-on conn-failure empty-response response-timeout

frontend api
  bind 127.0.0.1:${port}
  http-request del-header X-Forwarded-For
  option forwardfor
  default_backend apis

backend apis
${kind === 'api' ? API_BALANCING : RUNNER_BALANCING}
  http-response set-header X-Served-By %s
${backends.map((b) => `  server ${b.name} 127.0.0.1:${b.port} check`).join('\n')}

frontend stats
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats
`;
}

/** Starts HAProxy in the foreground (its own process group) and waits until every server is UP. */
export async function startHaproxy(
  t: Test,
  backends: Backend[],
  kind: BackendKind = 'api',
): Promise<Haproxy> {
  // No skipping when it is missing: scripts/setup installs it, so a machine without it is set up wrong.
  if (!existsSync(HAPROXY)) {
    throw new Error(
      `${HAPROXY} is missing: scripts/install-system-packages installs it (Debian package haproxy)`,
    );
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-haproxy-'));
  const [port, statsPort] = [await freePort(), await freePort()];
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(port, statsPort, backends, kind));
  const check = await runToEnd(HAPROXY, ['-c', '-f', file]);
  if (check.code !== 0) throw new Error(`haproxy -c: ${check.output}`);
  const { stderr } = spawnServer(t, HAPROXY, ['-db', '-f', file], { dir, detached: true });

  const status = async (): Promise<Record<string, string>> => {
    const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
    const lines = csv.split('\n');
    const header = (lines[0] ?? '').replace(/^# /, '').split(',');
    const [pxname, svname, state] = ['pxname', 'svname', 'status'].map((f) => header.indexOf(f));
    const result: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const cells = line.split(',');
      if (
        cells[pxname as number] === 'apis' &&
        !['FRONTEND', 'BACKEND'].includes(cells[svname as number] ?? '')
      )
        result[cells[svname as number] as string] = cells[state as number] ?? '';
    }
    return result;
  };
  const waitFor = async (server: string, wanted: 'UP' | 'DOWN', timeoutMs = 30_000): Promise<number> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const now = Date.now();
      const current = await status().catch(() => ({}) as Record<string, string>);
      // "UP 1/2" is still down-going, "DOWN 1/2" still up-going: only the settled states count.
      if (current[server] === wanted) return now;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(
      `HAProxy never marked ${server} ${wanted}: ${JSON.stringify(await status())}\n${stderr()}`,
    );
  };
  for (const backend of backends) await waitFor(backend.name, 'UP', 60_000);
  return { url: `http://127.0.0.1:${port}`, port, status, waitFor };
}

function runToEnd(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (c) => (output += c));
    child.stderr?.on('data', (c) => (output += c));
    child.on('close', (code) => resolve({ code, output }));
  });
}

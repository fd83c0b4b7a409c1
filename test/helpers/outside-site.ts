import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { stopProcess } from './processes.ts';

// A web site for scrapers to scrape, on this machine but outside the host's own addresses.
// Scraper containers cannot reach the host (the sandbox firewall drops every packet addressed to
// it, loopback included), so the site runs in a network namespace of its own, on a veth pair with
// addresses from TEST-NET-2 (198.51.100.0/24, which the firewall does not drop), routed through
// the host like an internet host. The host reaches it too, so a scraper can be tried locally
// against the same URL. Needs root (ip netns), as the runner's sandbox tests do.

export type OutsideSite = { url: string; close(): Promise<void> };

const SERVER = `
import functools, http.server, socketserver, sys
class Server(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[2])
server = Server((sys.argv[1], 8080), handler)
print("listening", flush=True)
server.serve_forever()
`;

function sh(command: string): void {
  const result = spawnSync('sh', ['-c', command], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command}: ${result.stderr}`);
}

/** Serves `files` (path -> content) at http://198.51.100.x:8080/ until the test ends. */
export async function startOutsideSite(t: Test, files: Record<string, string>): Promise<OutsideSite> {
  const root = mkdtempSync(path.join(tmpdir(), 'chronomap-site-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(root, name), content);
  // One /30 per process: concurrent test files get different addresses and interface names.
  const slot = process.pid % 60;
  const hostAddress = `198.51.100.${slot * 4 + 1}`;
  const siteAddress = `198.51.100.${slot * 4 + 2}`;
  const ns = `chronomap-site-${process.pid}`;
  const link = `cms${process.pid % 100000}`;
  sh(`ip netns add ${ns} && ip link add ${link}a type veth peer name ${link}b && ip link set ${link}b netns ${ns} &&
    ip addr add ${hostAddress}/30 dev ${link}a && ip link set ${link}a up &&
    ip netns exec ${ns} sh -c 'ip addr add ${siteAddress}/30 dev ${link}b && ip link set ${link}b up &&
      ip link set lo up && ip route add default via ${hostAddress}'`);
  const server = spawn('ip', ['netns', 'exec', ns, '/usr/bin/python3', '-c', SERVER, siteAddress, root], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await stopProcess(server, 'SIGKILL');
    spawnSync('sh', ['-c', `ip netns del ${ns}; ip link del ${link}a 2>/dev/null`]);
    rmSync(root, { recursive: true, force: true });
  };
  t.teardown(close);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    server.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('listening')) resolve();
    });
    server.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    server.once('exit', (code) => reject(new Error(`the site server exited with ${code}: ${output}`)));
  });
  server.stdout?.resume();
  server.stderr?.resume();
  return { url: `http://${siteAddress}:8080`, close };
}

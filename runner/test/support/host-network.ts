import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import type { Test } from 'tap';
import type { Harness } from './harness.ts';

// The host as a scraper would try to reach it from the sandbox: a service listening on every
// address, the runner API, the sandbox network's gateway, the host's own addresses (IPv4, the
// bridge's IPv6 link-local, global IPv6), and a Python probe that tries them. Used by
// sandbox.test.ts to show that none of them is reachable.

export async function hostNetwork(t: Test, h: Harness) {
  // A stand-in for the host's services listening on every address, IPv4 and IPv6 (as PostgreSQL,
  // the main application or the runner API would on a real host).
  const hostService = createServer((socket) => socket.end('hello from the host\n'));
  await new Promise<void>((resolve) => hostService.listen({ port: 0, host: '::', ipv6Only: false }, resolve));
  t.teardown(() => hostService.close());
  const servicePort = (hostService.address() as { port: number }).port;
  // The runner API itself, listening on every address as a deployed runner does.
  await h.app.listen({ port: 0, host: '0.0.0.0' });
  const runnerApiPort = (h.app.server.address() as { port: number }).port;
  const gateway = spawnSync(
    'podman',
    ['network', 'inspect', h.config.network, '--format', '{{range .Subnets}}{{.Gateway}}{{end}}'],
    { encoding: 'utf8' },
  ).stdout.trim();
  const hostAddress =
    spawnSync('sh', ['-c', "ip -4 route get 1.1.1.1 | sed -n 's/.* src \\([0-9.]*\\).*/\\1/p'"], {
      encoding: 'utf8',
    }).stdout.trim() || '127.0.0.1';

  /** The IPv6 link-local address of a podman network's bridge on the host, once it exists. */
  const bridgeLinkLocal = (network: string): string => {
    const bridge = spawnSync('podman', ['network', 'inspect', network, '--format', '{{.NetworkInterface}}'], {
      encoding: 'utf8',
    }).stdout.trim();
    const addr = spawnSync('ip', ['-6', '-o', 'addr', 'show', 'dev', bridge, 'scope', 'link'], {
      encoding: 'utf8',
    }).stdout;
    return /inet6 (fe80:[0-9a-f:]+)\//.exec(addr)?.[1] ?? '';
  };
  const hostGlobalIpv6 = [
    ...spawnSync('ip', ['-6', '-o', 'addr', 'show', 'scope', 'global'], { encoding: 'utf8' }).stdout.matchAll(
      /inet6 ([0-9a-f:]+)\//g,
    ),
  ].map((m) => m[1] as string);
  // Tries each target a few times (a fresh bridge address may still be tentative; a timeout,
  // a dropped packet, is final) and reports for each "reachable" or the error: by default one
  // printed line per target.
  const ipv6Probe = (targets: string[], port: number, report = 'print(host, probe(host))') => `
import socket, time
def probe(host):
    for attempt in range(8):
        try:
            socket.create_connection((host, ${port}), timeout=2).close()
            return "reachable"
        except TimeoutError as e:
            return "TimeoutError " + str(e)
        except OSError as e:
            error = type(e).__name__ + " " + str(e)
            time.sleep(0.25)
    return error
for host in ${JSON.stringify(targets)}:
    ${report}
`;
  return { servicePort, runnerApiPort, gateway, hostAddress, bridgeLinkLocal, hostGlobalIpv6, ipv6Probe };
}

// Network state a removed container can leave behind on a CNI host (podman 4.3 with the CNI
// backend, as on Debian bookworm): its address reservation in host-local's directory
// (/var/lib/cni/networks/<network>/<address>, whose first line is the container id) and its
// iptables rules (a nat chain `CNI-<hash>` jumped to from POSTROUTING with the comment
// `name: "<network>" id: "<container id>"`, and two CNI-FORWARD rules for its address). When
// podman's teardown does not run (a container killed from outside, podman itself killed) they
// stay: the network's 253 addresses would run out and every run would then fail. The runner
// reclaims them at start-up for every container podman no longer knows, and after each run for
// that run's container. Root only (the runner's network then lives in the host's namespace);
// netavark keeps its own database, which podman cleans itself.
import { spawn } from 'node:child_process';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { podmanCommand } from './container.ts';

const CNI_NETWORKS = '/var/lib/cni/networks';
const CNI_RESULTS = '/var/lib/cni/results';
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

export interface Reservation {
  address: string;
  containerId: string;
}

/** host-local's reservations for `network` (an empty list when there is no such directory). */
export async function reservations(network: string, directory = CNI_NETWORKS): Promise<Reservation[]> {
  let names: string[];
  try {
    names = await readdir(join(directory, network));
  } catch {
    return [];
  }
  const found: Reservation[] = [];
  for (const address of names.filter((name) => IPV4.test(name))) {
    const text = await readFile(join(directory, network, address), 'utf8').catch(() => '');
    const containerId = text.split('\n')[0]?.trim() ?? '';
    if (containerId !== '') found.push({ address, containerId });
  }
  return found;
}

function run(cmd: string, args: string[], input?: string): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'ignore'] });
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.on('error', () => resolve({ code: -1, stdout }));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout }));
    child.stdin?.on('error', () => undefined).end(input);
  });
}

/**
 * The iptables-restore input that deletes what CNI set up for `stale` containers of `network`:
 * their POSTROUTING jumps and nat chains, and the CNI-FORWARD rules of their addresses. Built
 * from `iptables-save` output, each rule deleted as it was saved.
 */
export function staleRules(nat: string, filter: string, network: string, stale: Reservation[]): string {
  const ids = new Set(stale.map((r) => r.containerId));
  const addresses = new Set(stale.map((r) => `${r.address}/32`));
  const natLines: string[] = [];
  const chains: string[] = [];
  for (const line of nat.split('\n')) {
    const m =
      /^-A POSTROUTING .*--comment "name: \\"([^"\\]+)\\" id: \\"([0-9a-f]+)\\"" -j (CNI-[0-9a-f]+)$/.exec(
        line,
      );
    const [, name, id, chain] = m ?? [];
    if (name === network && id !== undefined && ids.has(id) && chain !== undefined) {
      natLines.push(`-D${line.slice(2)}`);
      chains.push(chain);
    }
  }
  const filterLines = filter
    .split('\n')
    .filter((line) => {
      const m = /^-A CNI-FORWARD -[sd] (\S+) /.exec(line);
      return m?.[1] !== undefined && addresses.has(m[1]);
    })
    .map((line) => `-D${line.slice(2)}`);
  const flushed = chains.flatMap((chain) => [`-F ${chain}`, `-X ${chain}`]);
  return [
    ...(natLines.length > 0 ? ['*nat', ...natLines, ...flushed, 'COMMIT'] : []),
    ...(filterLines.length > 0 ? ['*filter', ...filterLines, 'COMMIT'] : []),
    '',
  ].join('\n');
}

async function release(network: string, stale: Reservation[]): Promise<void> {
  const [nat, filter] = await Promise.all([
    run('iptables-save', ['-t', 'nat']),
    run('iptables-save', ['-t', 'filter']),
  ]);
  const input = staleRules(nat.stdout, filter.stdout, network, stale);
  if (input.trim() !== '') await run('iptables-restore', ['--noflush'], input);
  for (const { address, containerId } of stale) {
    await rm(join(CNI_RESULTS, `${network}-${containerId}-eth0`), { force: true });
    await rm(join(CNI_NETWORKS, network, address), { force: true });
  }
}

/** Reclaims the reservations (and rules) of every container of `network` podman does not know. */
export async function reclaimNetwork(podman: string, network: string): Promise<Reservation[]> {
  if (process.getuid?.() !== 0) return [];
  const held = await reservations(network);
  if (held.length === 0) return [];
  const listed = await podmanCommand(podman, ['ps', '--all', '--no-trunc', '--format', '{{.ID}}']);
  if (listed.code !== 0) return [];
  const live = new Set(listed.stdout.split('\n').map((line) => line.trim()));
  const stale = held.filter((r) => !live.has(r.containerId));
  if (stale.length > 0) await release(network, stale);
  return stale;
}

/** After a run: reclaims what its container `containerId` still holds once it is gone. */
export async function reclaimContainer(
  podman: string,
  network: string,
  containerId: string,
): Promise<boolean> {
  if (process.getuid?.() !== 0 || containerId === '') return false;
  const stale = (await reservations(network)).filter((r) => r.containerId === containerId);
  if (stale.length === 0) return false; // the common case: podman released it
  if ((await podmanCommand(podman, ['container', 'exists', containerId])).code === 0) return false;
  await release(network, stale);
  return true;
}

// What a runner that died mid-run (kill -9, OOM, power loss of the process) left behind:
// containers labelled with its owner string and workspaces named after it (owner.ts). A runner
// removes them at start-up, before it accepts work. Containers also carry a podman-side
// `--timeout`, so they end even if no runner ever starts again. Then the address reservations
// and CNI rules of any removed container of the sandbox network are reclaimed
// (network-leaks.ts).
import { ownerAlive } from '../owner.ts';
import { sweepWorkspaces } from '../workspace.ts';
import { podmanCommand } from './container.ts';
import { reclaimNetwork } from './network-leaks.ts';
import { OWNER_LABEL } from './podman-args.ts';

export interface SweepReport {
  containers: string[];
  workspaces: string[];
  /** Addresses of the sandbox network whose reservation (and rules) were reclaimed. */
  addresses: string[];
}

export async function sweepOrphans(podman: string, dataDir: string, network: string): Promise<SweepReport> {
  const listed = await podmanCommand(podman, [
    'ps',
    '--all',
    '--filter',
    `label=${OWNER_LABEL}`,
    '--format',
    `{{.ID}} {{index .Labels "${OWNER_LABEL}"}}`,
  ]);
  const containers: string[] = [];
  for (const line of listed.stdout.split('\n')) {
    const [id, owner] = line.trim().split(' ');
    if (id && owner && !ownerAlive(owner)) containers.push(id);
  }
  // Containers first: their bind mounts keep the workspaces' file systems busy.
  if (containers.length > 0) await podmanCommand(podman, ['rm', '--force', '--ignore', ...containers]);
  const workspaces = await sweepWorkspaces(dataDir);
  const addresses = (await reclaimNetwork(podman, network)).map((r) => r.address);
  return { containers, workspaces, addresses };
}

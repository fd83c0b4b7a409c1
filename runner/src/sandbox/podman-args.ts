// The podman command line of one scraper container: every restriction the spec lists.
import { existsSync } from 'node:fs';

export interface SandboxSpec {
  name: string;
  instanceLabel: string;
  image: string;
  command: string[];
  codeDir: string;
  outputDir: string;
  /** A capped host tmpfs for /tmp (capped-mounts.ts); undefined: podman's own 64 MB tmpfs. */
  tmpDir: string | undefined;
  envFile: string;
  /** The runner process owning the container (owner.ts), for the sweep after a crash. */
  owner: string;
  /**
   * Seconds after which conmon kills the container on its own, even when the runner is gone.
   * Longer than the run's timeout: normally the runner stops it first.
   */
  hardTimeoutSecs: number;
  memoryMb: number;
  cpus: number;
  maxOutputBytes: number;
  network: string;
  dnsServers: string[];
  seccompProfile: string;
  /** Where podman writes the container id once the container is created (must not exist yet). */
  cidFile: string;
  /** Turn IPv6 off inside the container; false only on a host without IPv6 (see hostHasIpv6). */
  disableIpv6: boolean;
}

/**
 * Whether the kernel has IPv6 at all. On a host booted with ipv6.disable=1 the sysctls below do
 * not exist, runc would refuse them and no container would start; there is no IPv6 to turn off.
 */
export function hostHasIpv6(): boolean {
  return existsSync('/proc/sys/net/ipv6');
}

export const RUNNER_LABEL = 'org.chronomap.runner';
export const OWNER_LABEL = 'org.chronomap.runner.owner';

/**
 * `podman run` arguments. One podman process per run: `create` then `start --attach` cost a
 * second start of the podman binary (about 100 ms). The cid file tells the runner when the
 * container has been created (see container.ts).
 */
export function podmanRunArgs(spec: SandboxSpec): string[] {
  return [
    'run',
    '--cidfile',
    spec.cidFile,
    '--rm',
    '--replace',
    '--pull=never',
    // A real init as PID 1: SIGTERM from `podman stop` ends the scraper, and orphans are reaped.
    '--init',
    '--name',
    spec.name,
    '--label',
    `${RUNNER_LABEL}=${spec.instanceLabel}`,
    '--label',
    `${OWNER_LABEL}=${spec.owner}`,
    // conmon kills the container at this age even if the runner died meanwhile; a restarted
    // runner removes what is left (orphans.ts).
    '--timeout',
    String(spec.hardTimeoutSecs),
    // Privileges: no capabilities, no setuid gains, a syscall allow-list, a remapped user.
    '--cap-drop=ALL',
    '--security-opt',
    'no-new-privileges',
    '--security-opt',
    `seccomp=${spec.seccompProfile}`,
    // An explicit size: without one, containers/storage creates and mounts a temporary layer
    // of the image on every run to read its /etc/passwd and /etc/group for the highest id.
    // That was most of the sandbox's start-up cost (docs/performance.md, "Runner") and one
    // more storage change for podman 4.3's lock-order bug. 65536 ids cover every id in a
    // Debian image, nobody (65534) included.
    '--userns=auto:size=65536',
    '--user',
    '1000:1000',
    // Filesystem: read-only root, code read-only, output and a small non-executable /tmp, both
    // host tmpfs mounts whose size and inode count the kernel enforces (capped-mounts.ts), and
    // no /dev/shm (no IPC namespace of its own: a third writable place otherwise).
    '--read-only',
    '--read-only-tmpfs=false',
    '--ipc=none',
    ...(spec.tmpDir === undefined
      ? ['--tmpfs', '/tmp:rw,noexec,nosuid,nodev,size=64m']
      : ['-v', `${spec.tmpDir}:/tmp:rw,nosuid,nodev,noexec`]),
    '-v',
    `${spec.codeDir}:/scraper:ro,nosuid,nodev,noexec`,
    // U: chown the output directory to the remapped uid so the scraper can write it.
    '-v',
    `${spec.outputDir}:/output:rw,U,nosuid,nodev,noexec`,
    '--workdir',
    '/scraper',
    // Resources. Explicit ulimits replace containers.conf's defaults; fsize makes the kernel
    // refuse to grow any file past the output cap even between two of our size checks.
    '--pids-limit',
    '256',
    '--memory',
    `${spec.memoryMb}m`,
    '--memory-swap',
    `${spec.memoryMb}m`,
    '--cpus',
    String(spec.cpus),
    '--ulimit',
    'nofile=1024:1024',
    '--ulimit',
    'nproc=512:512',
    '--ulimit',
    `fsize=${spec.maxOutputBytes + 1}:${spec.maxOutputBytes + 1}`,
    // Network: the firewalled sandbox network and an external resolver only.
    '--network',
    spec.network,
    ...spec.dnsServers.flatMap((server) => ['--dns', server]),
    // The network is IPv4 only, yet the kernel would give the container an IPv6 link-local
    // address, and through the bridge's own link-local address any host service listening on
    // [::] would be reachable. No IPv6 at all inside (the firewall also drops it on the host).
    ...(spec.disableIpv6
      ? ['--sysctl', 'net.ipv6.conf.all.disable_ipv6=1', '--sysctl', 'net.ipv6.conf.default.disable_ipv6=1']
      : []),
    '--no-hosts',
    '--env-file',
    spec.envFile,
    '--log-driver',
    'none',
    spec.image,
    ...spec.command,
  ];
}

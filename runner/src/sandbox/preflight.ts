// Checks, before the runner accepts work, that the container engine can really apply the
// sandbox: a runner that would run scrapers unconfined must refuse to start instead.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { RunnerConfig } from '../config.ts';
import { createWorkspace, removeWorkspace, writeEnvFile } from '../workspace.ts';
import { startContainer } from './container.ts';
import { canMountCapped } from './capped-mounts.ts';
import { workspaceCaps, workspaceSpec } from '../run-manager.ts';
import { PRIVATE_RANGES } from './stream-check/ranges.ts';
import { streamCheckRules } from './stream-check/rules.ts';

function capture(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', (err) => resolve({ code: -1, stdout, stderr: err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

interface PodmanInfo {
  host?: { cgroupVersion?: string; cgroupControllers?: string[]; security?: { rootless?: boolean } };
  version?: { Version?: string };
}

/** What stops this host from sandboxing scrapers; empty when all is well. */
export async function engineProblems(config: RunnerConfig): Promise<string[]> {
  const podman = config.podmanPath;
  const infoRun = await capture(podman, ['info', '--format', 'json']);
  if (infoRun.code !== 0)
    return [`'${podman} info' failed: ${infoRun.stderr.trim() || `exit ${infoRun.code}`}`];
  const info = JSON.parse(infoRun.stdout) as PodmanInfo;
  const problems: string[] = [];
  const major = Number((info.version?.Version ?? '0').split('.')[0]);
  if (major < 4) problems.push(`podman ${info.version?.Version} is too old: 4.0 or newer is needed`);
  const rootless = info.host?.security?.rootless === true;
  if (rootless && info.host?.cgroupVersion === 'v1') {
    problems.push(
      'rootless podman on cgroup v1 cannot apply the memory, CPU and pids limits: run the runner as root or on a cgroup v2 host',
    );
  }
  const controllers = info.host?.cgroupControllers ?? [];
  for (const needed of ['memory', 'pids', 'cpu']) {
    if (!controllers.includes(needed))
      problems.push(
        `the cgroup controller '${needed}' is not available to podman, so its limit cannot be applied`,
      );
  }
  if ((await capture(podman, ['network', 'exists', config.network])).code !== 0) {
    problems.push(`network ${config.network} is missing: run scripts/podman/setup`);
  }
  for (const image of [config.imagePython, config.imageNode]) {
    if ((await capture(podman, ['image', 'exists', image])).code !== 0)
      problems.push(`image ${image} is missing: run runner/images/build`);
  }
  try {
    JSON.parse(await readFile(config.seccompProfile, 'utf8'));
  } catch (err) {
    problems.push(`seccomp profile ${config.seccompProfile} is unreadable: ${(err as Error).message}`);
  }
  if (problems.length > 0) return problems;
  const probe = await probeContainer(config);
  if (probe.length > 0) return probe;
  return firewallProblems(config);
}

/**
 * Limits this host cannot apply, which do not stop the runner (logged at start-up): the
 * capped mounts need root, and I/O limits need cgroup v2's io controller (cgroup v1's blkio
 * throttles direct I/O only). A scraper has no writable disk in either case: its writable
 * places are tmpfs mounts.
 */
export async function engineNotes(config: RunnerConfig): Promise<string[]> {
  const notes: string[] = [];
  if (!canMountCapped())
    notes.push(
      'not running as root: /output and /tmp are not size- and inode-capped mounts; only the 200 ms watcher enforces the output caps',
    );
  const infoRun = await capture(config.podmanPath, ['info', '--format', 'json']);
  const info = (infoRun.code === 0 ? JSON.parse(infoRun.stdout) : {}) as PodmanInfo;
  if (info.host?.cgroupVersion !== 'v2' || !(info.host?.cgroupControllers ?? []).includes('io'))
    notes.push(
      `cgroup ${info.host?.cgroupVersion ?? 'unknown'} without the io controller: no I/O bandwidth limit is applied to scrapers (they can only read the image; their writes go to capped tmpfs mounts)`,
    );
  return notes;
}

/** The chain scripts/podman/firewall installs (in the raw table of iptables and ip6tables). */
const CHAIN = 'CHRONOMAP_SANDBOX';
/** The mangle-table chain capping each container address's new and tracked flows. */
const FLOWS_CHAIN = 'CHRONOMAP_FLOWS';
/** Without bridge netfilter, traffic between two containers of the bridge bypasses iptables. */
const BRIDGE_NETFILTER = '/proc/sys/net/bridge/bridge-nf-call-iptables';
/** Its sub-chain dropping traffic that names a package registry. */
const REGISTRY_CHAIN = 'CHRONOMAP_REGISTRY';
/** DNS over TLS/QUIC (853) and QUIC (UDP 443): dropped whoever they go to (no readable name). */
const ENCRYPTED_NAMES = [
  [REGISTRY_CHAIN, '-p', 'tcp', '--dport', '853', '-j', 'DROP'],
  [REGISTRY_CHAIN, '-p', 'udp', '--dport', '853', '-j', 'DROP'],
  [REGISTRY_CHAIN, '-p', 'udp', '--dport', '443', '-j', 'DROP'],
];
const blockedHostsFile = fileURLToPath(new URL('../../sandbox-blocked-hosts.txt', import.meta.url));

/** The domains of runner/sandbox-blocked-hosts.txt (comments and blank lines skipped). */
export async function blockedHosts(): Promise<string[]> {
  return (await readFile(blockedHostsFile, 'utf8'))
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** A domain as iptables' --hex-string of its DNS labels: npmjs.org -> |05|npmjs|03|org|00| */
export function dnsLabels(domain: string): string {
  const labels = domain.split('.').map((label) => `|${label.length.toString(16).padStart(2, '0')}|${label}`);
  return `${labels.join('')}|00|`;
}

/** The registry rules scripts/podman/firewall installs for one domain. */
function registryRules(domain: string): string[][] {
  const match = ['-m', 'string', '--algo', 'bm', '--icase'];
  return [
    ...['udp', 'tcp'].map((proto) => [
      REGISTRY_CHAIN,
      '-p',
      proto,
      '--dport',
      '53',
      ...match,
      '--hex-string',
      dnsLabels(domain),
      '-j',
      'DROP',
    ]),
    ...['443', '80'].map((port) => [
      REGISTRY_CHAIN,
      '-p',
      'tcp',
      '--dport',
      port,
      ...match,
      '--string',
      domain,
      '-j',
      'DROP',
    ]),
  ];
}

/** The flow caps scripts/podman/firewall installs with SCRAPER_FLOW_RATE and SCRAPER_FLOW_MAX. */
function flowRules(config: RunnerConfig): string[][] {
  const isNew = ['-m', 'conntrack', '--ctstate', 'NEW'];
  return [
    [
      FLOWS_CHAIN,
      ...isNew,
      '-m',
      'connlimit',
      '--connlimit-above',
      String(config.flowMax),
      '--connlimit-mask',
      '32',
      '--connlimit-saddr',
      '-j',
      'DROP',
    ],
    [
      FLOWS_CHAIN,
      ...isNew,
      '-m',
      'hashlimit',
      '--hashlimit-above',
      `${config.flowRate}/sec`,
      '--hashlimit-burst',
      String(config.flowRate),
      '--hashlimit-mode',
      'srcip',
      '--hashlimit-name',
      'chronomap_flows',
      '-j',
      'DROP',
    ],
  ];
}

/**
 * Whether scripts/podman/firewall's rules are in place for the sandbox network: without them
 * (a reboot without the unit, a flushed table) a scraper reaches the host's services. Checked
 * as root only: rootless podman's networks live in a namespace of their own, which these
 * host rules do not govern.
 */
async function firewallProblems(config: RunnerConfig): Promise<string[]> {
  if (process.getuid?.() !== 0) return [];
  const inspect = await capture(config.podmanPath, [
    'network',
    'inspect',
    config.network,
    '--format',
    '{{.NetworkInterface}}{{range .Subnets}} {{.Subnet}}{{end}}',
  ]);
  const [bridge, ...subnets] = inspect.stdout.trim().split(/\s+/);
  if (inspect.code !== 0 || !bridge)
    return [`cannot read network ${config.network}: ${inspect.stderr.trim() || `exit ${inspect.code}`}`];
  const ipv4 = subnets.filter((subnet) => !subnet.includes(':'));
  const bridging = await readFile(BRIDGE_NETFILTER, 'utf8').catch(() => 'missing');
  if (bridging.trim() !== '1')
    return [
      `bridge netfilter is off (${BRIDGE_NETFILTER}: ${bridging.trim()}; module br_netfilter), so containers of ${bridge} could reach each other past the firewall: run scripts/podman/setup`,
    ];
  const needed: Array<[string, string, string[]]> = [
    ...ipv4.map((subnet): [string, string, string[]] => [
      'iptables',
      'raw',
      ['PREROUTING', '-s', subnet, '-j', CHAIN],
    ]),
    ['iptables', 'raw', [CHAIN, '-m', 'addrtype', '--dst-type', 'LOCAL', '-j', 'DROP']],
    ['iptables', 'raw', [CHAIN, '-j', REGISTRY_CHAIN]],
    ...PRIVATE_RANGES.map((range): [string, string, string[]] => [
      'iptables',
      'raw',
      [CHAIN, '-d', range, '-j', 'DROP'],
    ]),
    ...ENCRYPTED_NAMES.map((rule): [string, string, string[]] => ['iptables', 'raw', rule]),
    ...(await blockedHosts()).flatMap((domain) =>
      registryRules(domain).map((rule): [string, string, string[]] => ['iptables', 'raw', rule]),
    ),
    ...ipv4.map((subnet): [string, string, string[]] => [
      'iptables',
      'mangle',
      ['PREROUTING', '-s', subnet, '-j', FLOWS_CHAIN],
    ]),
    ...flowRules(config).map((rule): [string, string, string[]] => ['iptables', 'mangle', rule]),
    ...(await streamCheckRules(config, ipv4, REGISTRY_CHAIN)),
    ['ip6tables', 'raw', ['PREROUTING', '-i', bridge, '-j', CHAIN]],
    ['ip6tables', 'raw', [CHAIN, '-j', 'DROP']],
  ];
  for (const [tool, table, rule] of needed) {
    const check = await capture(tool, ['-t', table, '-C', ...rule]);
    if (check.code !== 0)
      return [
        `the sandbox firewall is not in place for network ${config.network} (${bridge} ${subnets.join(' ')}): ` +
          `'${tool} -t ${table} -C ${rule.join(' ')}' failed (${check.stderr.trim() || `exit ${check.code}`}); ` +
          `run scripts/podman/setup`,
      ];
  }
  return [];
}

/** The IPv4 subnets of the sandbox network (for the stream check's allowed clients). */
export async function sandboxSubnets(config: RunnerConfig): Promise<string[]> {
  const inspect = await capture(config.podmanPath, [
    'network',
    'inspect',
    config.network,
    '--format',
    '{{range .Subnets}}{{.Subnet}} {{end}}',
  ]);
  return inspect.stdout.split(/\s+/).filter((subnet) => subnet !== '' && !subnet.includes(':'));
}

/** Starts one container with every sandbox flag: this is where a runtime that cannot apply a limit fails. */
async function probeContainer(config: RunnerConfig): Promise<string[]> {
  const caps = workspaceCaps(config);
  const workspace = await createWorkspace(config.dataDir, `probe-${randomUUID()}`, caps);
  try {
    await writeEnvFile(workspace.envFile, {});
    const running = startContainer(
      {
        name: `chronomap-probe-${randomUUID()}`,
        instanceLabel: 'probe',
        image: config.imagePython,
        command: ['true'],
        ...workspaceSpec(config, workspace),
        hardTimeoutSecs: 60,
        memoryMb: 64,
      },
      { podman: config.podmanPath, maxLogBytes: 64 * 1024, createTimeoutMs: config.createTimeoutSecs * 1000 },
    );
    const result = await running.result;
    if (result.engineError !== undefined || result.exitCode !== 0) {
      const detail = result.engineError ?? `exit ${result.exitCode}: ${result.stderr.trim()}`;
      return [`the container engine could not start a sandboxed container: ${detail}`];
    }
    return [];
  } finally {
    await removeWorkspace(workspace);
  }
}

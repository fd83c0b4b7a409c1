// The engine check that makes the runner refuse to start rather than run scrapers unconfined.
// A stand-in `podman` script plays hosts that cannot apply the limits; the real podman plays
// this host, which can.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../src/config.ts';
import { blockedHosts, dnsLabels, engineNotes, engineProblems } from '../src/sandbox/preflight.ts';

const dir = mkdtempSync(join(tmpdir(), 'chronomap-preflight-'));
const base = { SCRAPER_API_KEY: 'k'.repeat(16), SCRAPER_DATA_DIR: join(dir, 'data') };

function fakePodman(name: string, info: object, runFails?: string): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    `#!/bin/sh
case "$1" in
  info) echo '${JSON.stringify(info)}' ;;
  run) ${runFails ? `echo '${runFails}' >&2; exit 125` : 'exit 0'} ;;
  *) exit 0 ;;
esac
`,
  );
  chmodSync(path, 0o755);
  return path;
}

t.test('rootless podman on cgroup v1 is refused, and missing controllers are named', async (t) => {
  const podman = fakePodman('rootless-v1', {
    version: { Version: '4.3.1' },
    host: { cgroupVersion: 'v1', cgroupControllers: ['cpu'], security: { rootless: true } },
  });
  const problems = await engineProblems(loadConfig({ ...base, SCRAPER_PODMAN: podman }));
  t.match(problems, [
    /rootless podman on cgroup v1 cannot apply the memory, CPU and pids limits/,
    /'memory' is not available/,
    /'pids' is not available/,
  ]);
});

t.test('podman older than 4 is refused', async (t) => {
  const podman = fakePodman('old', {
    version: { Version: '3.4.4' },
    host: {
      cgroupVersion: 'v2',
      cgroupControllers: ['cpu', 'memory', 'pids'],
      security: { rootless: false },
    },
  });
  t.match(await engineProblems(loadConfig({ ...base, SCRAPER_PODMAN: podman })), [
    /podman 3\.4\.4 is too old/,
  ]);
});

t.test('a runtime that fails to apply the sandbox is reported with its own message', async (t) => {
  const podman = fakePodman(
    'crun-fails',
    {
      version: { Version: '4.3.1' },
      host: {
        cgroupVersion: 'v2',
        cgroupControllers: ['cpu', 'memory', 'pids'],
        security: { rootless: false },
      },
    },
    'Error: crun: opening file `memory.max` for writing: Permission denied: OCI permission denied',
  );
  t.match(await engineProblems(loadConfig({ ...base, SCRAPER_PODMAN: podman })), [
    /could not start a sandboxed container: Error: crun: opening file `memory.max`/,
  ]);
});

t.test('a missing podman is reported', async (t) => {
  t.match(await engineProblems(loadConfig({ ...base, SCRAPER_PODMAN: join(dir, 'nope') })), [/info' failed/]);
});

t.test('this host passes, probe container and firewall included', async (t) => {
  t.same(await engineProblems(loadConfig(base)), []);
});

t.test('a sandbox network without the firewall rules is refused', async (t) => {
  // A network of its own, which scripts/podman/firewall never saw; podman picks a free subnet.
  const network = `chronomap-nofw-${process.pid}`;
  const created = spawnSync('podman', ['network', 'create', '--disable-dns', network], { encoding: 'utf8' });
  t.equal(created.status, 0, created.stderr);
  t.teardown(() => void spawnSync('podman', ['network', 'rm', '-f', network]));
  t.match(await engineProblems(loadConfig({ ...base, SCRAPER_NETWORK: network })), [
    new RegExp(
      `^the sandbox firewall is not in place for network ${network} .*'iptables -t raw -C PREROUTING -s [0-9./]+ -j CHRONOMAP_SANDBOX' failed.*run scripts/podman/setup$`,
    ),
  ]);
});

t.test(
  'limits the host cannot apply are reported: I/O limits need cgroup v2 with the io controller',
  async (t) => {
    const v1 = fakePodman('notes-v1', { version: { Version: '4.3.1' }, host: { cgroupVersion: 'v1' } });
    t.match(await engineNotes(loadConfig({ ...base, SCRAPER_PODMAN: v1 })), [
      /cgroup v1 without the io controller: no I\/O bandwidth limit/,
    ]);
    const v2 = fakePodman('notes-v2', {
      version: { Version: '4.3.1' },
      host: { cgroupVersion: 'v2', cgroupControllers: ['cpu', 'io', 'memory', 'pids'] },
    });
    t.same(
      await engineNotes(loadConfig({ ...base, SCRAPER_PODMAN: v2 })),
      [],
      'as root on cgroup v2: nothing',
    );
  },
);

t.test('a firewall without a registry rule is refused', async (t) => {
  t.equal(dnsLabels('files.pythonhosted.org'), '|05|files|0c|pythonhosted|03|org|00|');
  t.ok((await blockedHosts()).includes('npmjs.org'));
  // Take one rule out for a moment and put it back.
  const rule = [
    'CHRONOMAP_REGISTRY',
    '-p',
    'tcp',
    '--dport',
    '443',
    '-m',
    'string',
    '--algo',
    'bm',
    '--icase',
    '--string',
    'pypi.org',
    '-j',
    'DROP',
  ];
  t.equal(spawnSync('iptables', ['-t', 'raw', '-D', ...rule]).status, 0, 'the rule was there');
  try {
    t.match(await engineProblems(loadConfig(base)), [
      /the sandbox firewall is not in place .*'iptables -t raw -C CHRONOMAP_REGISTRY -p tcp --dport 443 .* --string pypi\.org -j DROP' failed/,
    ]);
  } finally {
    spawnSync('iptables', ['-t', 'raw', '-A', ...rule]);
  }
  t.same(await engineProblems(loadConfig(base)), [], 'and passes again once it is back');
});

/** Takes a rule out of the firewall while `check` runs, then puts it back where it was (-I at its number). */
async function without(table: string, chain: string, rule: string[], check: () => Promise<void>) {
  const listed = spawnSync('iptables', ['-t', table, '-S', chain], { encoding: 'utf8' }).stdout.split('\n');
  const position =
    listed
      .filter((line) => line.startsWith('-A '))
      .findIndex((line) => line === `-A ${chain} ${rule.join(' ')}`) + 1;
  if (position === 0) throw new Error(`rule not found: ${rule.join(' ')}`);
  spawnSync('iptables', ['-t', table, '-D', chain, ...rule]);
  try {
    await check();
  } finally {
    spawnSync('iptables', ['-t', table, '-I', chain, String(position), ...rule]);
  }
}

t.test('a firewall without a private-range drop is refused', async (t) => {
  await without('raw', 'CHRONOMAP_SANDBOX', ['-d', '169.254.0.0/16', '-j', 'DROP'], async () => {
    t.match(await engineProblems(loadConfig(base)), [
      /'iptables -t raw -C CHRONOMAP_SANDBOX -d 169\.254\.0\.0\/16 -j DROP' failed/,
    ]);
  });
  t.same(await engineProblems(loadConfig(base)), [], 'and passes again once it is back');
});

t.test('the flow caps must be installed, with the values the runner is configured for', async (t) => {
  const rule = [
    '-m',
    'conntrack',
    '--ctstate',
    'NEW',
    '-m',
    'connlimit',
    '--connlimit-above',
    '4096',
    '--connlimit-mask',
    '32',
    '--connlimit-saddr',
    '-j',
    'DROP',
  ];
  await without('mangle', 'CHRONOMAP_FLOWS', rule, async () => {
    t.match(await engineProblems(loadConfig(base)), [
      /'iptables -t mangle -C CHRONOMAP_FLOWS -m conntrack --ctstate NEW -m connlimit --connlimit-above 4096 .*' failed/,
    ]);
  });
  t.match(await engineProblems(loadConfig({ ...base, SCRAPER_FLOW_RATE: '50' })), [
    /'iptables -t mangle -C CHRONOMAP_FLOWS .* --hashlimit-above 50\/sec --hashlimit-burst 50 .*' failed/,
  ]);
});

t.test(
  'the stream check redirect and the resolver-only DNS rule must be installed, for the configured values',
  async (t) => {
    const redirect = [
      '-p',
      'tcp',
      '-m',
      'multiport',
      '--dports',
      '53,80,443',
      '-j',
      'REDIRECT',
      '--to-ports',
      '3443',
    ];
    await without('nat', 'CHRONOMAP_STREAMS', redirect, async () => {
      t.match(await engineProblems(loadConfig(base)), [
        /'iptables -t nat -C CHRONOMAP_STREAMS -p tcp -m multiport --dports 53,80,443 -j REDIRECT --to-ports 3443' failed/,
      ]);
    });
    t.match(await engineProblems(loadConfig({ ...base, SCRAPER_DNS: '8.8.8.8' })), [
      /'iptables -t raw -C CHRONOMAP_DNS -d 8\.8\.8\.8 -j RETURN' failed/,
    ]);
  },
);

t.test('bridge netfilter off is refused', async (t) => {
  const sysctl = '/proc/sys/net/bridge/bridge-nf-call-iptables';
  writeFileSync(sysctl, '0');
  try {
    t.match(await engineProblems(loadConfig(base)), [
      /bridge netfilter is off .*br_netfilter.*could reach each other/,
    ]);
  } finally {
    writeFileSync(sysctl, '1');
  }
});

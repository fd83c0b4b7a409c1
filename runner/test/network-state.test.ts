// Real podman and the installed firewall: network state a scraper or a crash must not leave
// on the host (issue 34). A run's new and tracked flows are capped per container address, and
// the address reservations and CNI rules of removed containers are reclaimed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import t from 'tap';
import { reclaimContainer, reclaimNetwork, reservations } from '../src/sandbox/network-leaks.ts';
import { makeHarness, py } from './support/harness.ts';
import { WAN_ADDRESS, startWanHost } from './support/wan-host.ts';

const h = makeHarness({ SCRAPER_DEFAULT_TIMEOUT: '60' });
t.teardown(() => h.close());
t.teardown(startWanHost());

/** Tracked flows in the host's table from `source` to the stand-in host's ports [from, to]. */
function trackedFlows(source: string, from: number, to: number): number {
  return readFileSync('/proc/net/nf_conntrack', 'utf8')
    .split('\n')
    .filter((line) => {
      const m = / src=(\S+) dst=(\S+) sport=\d+ dport=(\d+)/.exec(line);
      return m?.[1] === source && m[2] === WAN_ADDRESS && Number(m[3]) >= from && Number(m[3]) <= to;
    }).length;
}

t.test(
  'a burst of 6,000 new flows is capped: at most 4,096 tracked, at most 1,000/s past a burst of 1,000',
  async (t) => {
    const { body } = await h.run(
      py(`import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("${WAN_ADDRESS}", 9)); me = s.getsockname()[0]; s.close()
began = time.monotonic()
for port in range(20000, 26000):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"x", ("${WAN_ADDRESS}", port)); u.close()
print(me, time.monotonic() - began)
`),
    );
    t.equal(body.exit_code, 0, body.stderr);
    const [address, seconds] = body.stdout.trim().split(' ');
    const flows = trackedFlows(address ?? '', 20000, 25999);
    t.ok(flows > 0, `${flows} flows tracked: traffic does flow`);
    t.ok(flows <= 4096, `${flows} tracked at once, at most 4,096 (6,000 sent)`);
    // The rate cap: a token bucket of 1,000 refilled at 1,000/s over the time the scraper sent.
    const bound = 1000 + 1000 * (Number(seconds) + 0.1);
    t.ok(flows <= bound, `${flows} flows in ${seconds} s: at most ${Math.round(bound)}`);
  },
);

/** A container id podman never had, and the CNI state a lost teardown would leave for it. */
function plantLeak(address: string): { id: string; chain: string } {
  const id = Array.from({ length: 64 }, (_, i) => '0123456789abcdef'[(i * 7 + Date.now()) % 16]).join('');
  const chain = `CNI-${id.slice(0, 24)}`;
  writeFileSync(`/var/lib/cni/networks/${h.config.network}/${address}`, `${id}\neth0`);
  const comment = ['-m', 'comment', '--comment', `name: "${h.config.network}" id: "${id}"`];
  const ipt = (...args: string[]) => t.equal(spawnSync('iptables', args).status, 0, args.join(' '));
  ipt('-t', 'nat', '-N', chain);
  ipt('-t', 'nat', '-A', chain, '-d', '10.89.77.0/24', ...comment, '-j', 'ACCEPT');
  ipt('-t', 'nat', '-A', 'POSTROUTING', '-s', `${address}/32`, ...comment, '-j', chain);
  ipt(
    '-A',
    'CNI-FORWARD',
    '-d',
    `${address}/32`,
    '-m',
    'conntrack',
    '--ctstate',
    'RELATED,ESTABLISHED',
    '-j',
    'ACCEPT',
  );
  ipt('-A', 'CNI-FORWARD', '-s', `${address}/32`, '-j', 'ACCEPT');
  return { id, chain };
}

const saved = () => spawnSync('iptables-save', { encoding: 'utf8' }).stdout;

t.test(
  'the reservation and rules of a removed container are reclaimed; a live container keeps its own',
  async (t) => {
    const live = spawnSync(
      'podman',
      ['run', '-d', '--rm', '--network', h.config.network, h.config.imagePython, 'sleep', '60'],
      { encoding: 'utf8' },
    ).stdout.trim();
    t.teardown(() => void spawnSync('podman', ['rm', '-f', '-t', '0', live]));
    const leak = plantLeak('10.89.77.250');
    t.ok(saved().includes(leak.id), 'the leaked rules are there');
    const reclaimed = await reclaimNetwork(h.config.podmanPath, h.config.network);
    t.same(reclaimed, [{ address: '10.89.77.250', containerId: leak.id }]);
    t.notOk(existsSync(`/var/lib/cni/networks/${h.config.network}/10.89.77.250`), 'reservation released');
    const after = saved();
    t.notOk(after.includes(leak.id), 'no rule names the removed container');
    t.notOk(after.includes(leak.chain), 'its nat chain is gone');
    t.notOk(after.includes('10.89.77.250/32'), 'no rule names its address');
    const held = await reservations(h.config.network);
    t.ok(
      held.some((r) => r.containerId === live),
      "the live container's reservation stays",
    );
    t.ok(after.includes(`id: \\"${live}\\"`), 'and so do its rules');
  },
);

t.test('after a run, what its removed container still holds is reclaimed', async (t) => {
  const leak = plantLeak('10.89.77.251');
  t.equal(
    await reclaimContainer(h.config.podmanPath, h.config.network, 'f'.repeat(64)),
    false,
    'another id: nothing',
  );
  t.equal(await reclaimContainer(h.config.podmanPath, h.config.network, leak.id), true);
  t.notOk(existsSync(`/var/lib/cni/networks/${h.config.network}/10.89.77.251`));
  t.notOk(saved().includes(leak.id));
});

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), []);
  t.same(h.containers(), []);
});

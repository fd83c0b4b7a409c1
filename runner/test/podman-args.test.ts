// The container command line carries every restriction the spec lists.
import t from 'tap';
import { podmanRunArgs } from '../src/sandbox/podman-args.ts';
import { CappedText } from '../src/sandbox/capped-text.ts';

const spec = {
  name: 'chronomap-run-x',
  instanceLabel: 'i',
  image: 'localhost/runner-python',
  command: ['python3', '/scraper/main.py'],
  codeDir: '/w/code',
  outputDir: '/w/output',
  tmpDir: '/w/tmp',
  envFile: '/w/env',
  owner: '42.4242',
  hardTimeoutSecs: 90,
  memoryMb: 256,
  cpus: 1.5,
  maxOutputBytes: 1000,
  network: 'scraper-sandbox',
  dnsServers: ['1.1.1.1', '9.9.9.9'],
  seccompProfile: '/p/seccomp.json',
  cidFile: '/w/cid',
  disableIpv6: true,
};
const args = podmanRunArgs(spec);
const line = args.join(' ');

t.test('every sandbox flag is present', async (t) => {
  for (const flag of [
    'run --cidfile /w/cid --rm',
    '--pull=never',
    '--cap-drop=ALL',
    '--security-opt no-new-privileges',
    '--security-opt seccomp=/p/seccomp.json',
    '--userns=auto:size=65536',
    '--read-only',
    '--ipc=none',
    '-v /w/tmp:/tmp:rw,nosuid,nodev,noexec',
    '--label org.chronomap.runner.owner=42.4242',
    '--timeout 90',
    '-v /w/code:/scraper:ro,',
    '-v /w/output:/output:rw,',
    '--pids-limit 256',
    '--memory 256m',
    '--memory-swap 256m',
    '--cpus 1.5',
    '--network scraper-sandbox',
    '--dns 1.1.1.1',
    '--dns 9.9.9.9',
    '--env-file /w/env',
    '--sysctl net.ipv6.conf.all.disable_ipv6=1',
    '--sysctl net.ipv6.conf.default.disable_ipv6=1',
    '--ulimit fsize=1001:1001',
  ])
    t.ok(line.includes(flag), flag);
  t.same(
    args.slice(-3),
    ['localhost/runner-python', 'python3', '/scraper/main.py'],
    'image and command come last',
  );
});

t.test("without capped mounts (not root) /tmp is podman's own 64 MB tmpfs", async (t) => {
  const without = podmanRunArgs({ ...spec, tmpDir: undefined }).join(' ');
  t.match(without, '--tmpfs /tmp:rw,noexec,nosuid,nodev,size=64m');
  t.notMatch(without, '/w/tmp');
});

t.test('on a host without IPv6 there is no IPv6 sysctl to set', async (t) => {
  const without = podmanRunArgs({ ...spec, disableIpv6: false }).join(' ');
  t.notMatch(without, /--sysctl/);
  t.equal(without, line.replace(/ --sysctl \S+/g, ''), 'nothing else changes');
});

t.test('captured text keeps the first bytes and counts the rest', async (t) => {
  const text = new CappedText(5);
  t.equal(text.push(Buffer.from('abc')), false, 'within the cap');
  t.equal(text.push(Buffer.from('defgh')), true, 'past the cap');
  t.equal(text.push(Buffer.from('ij')), true);
  t.equal(text.text(), 'abcde\n[chronomap-runner: 5 more bytes not kept]\n');
  const small = new CappedText(10);
  small.push(Buffer.from('ok'));
  t.equal(small.text(), 'ok');
});

// Real podman: what a scraper can and cannot do inside the sandbox. Cases run concurrently up
// to the harness's concurrency limit to keep the suite short on two cores.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { concurrentScenarios, csvOf, csvRecords, makeHarness, py } from './support/harness.ts';
import { hostNetwork } from './support/host-network.ts';
import { WAN_ADDRESS, startWanHost } from './support/wan-host.ts';

const h = makeHarness({
  SCRAPER_MAX_CONCURRENT: '4',
  SCRAPER_MAX_OUTPUT_SIZE_MB: '5',
  SCRAPER_DEFAULT_TIMEOUT: '60',
});
t.teardown(() => h.close());

const { servicePort, runnerApiPort, gateway, hostAddress, bridgeLinkLocal, hostGlobalIpv6, ipv6Probe } =
  await hostNetwork(t, h);

t.teardown(startWanHost());

t.test(
  "control: a container on podman's default network (no firewall rules) reaches the stand-in service",
  async (t) => {
    t.ok(gateway, 'sandbox network has a gateway address');
    const probe = `import socket; socket.create_connection(('${hostAddress}', ${servicePort}), 3).close(); print('reachable')`;
    const r = spawnSync(
      'podman',
      ['run', '--rm', '--network', 'podman', h.config.imagePython, 'python3', '-c', probe],
      { encoding: 'utf8' },
    );
    t.equal(
      r.stdout.trim(),
      'reachable',
      `so a refusal from the sandbox is the firewall's doing ${r.stderr}`,
    );
    // The same over IPv6: that network is IPv4 only too, yet its bridge's link-local address
    // leads to the host's services listening on [::].
    const linkLocal = bridgeLinkLocal('podman');
    t.ok(linkLocal, "podman's default bridge has an IPv6 link-local address");
    const r6 = spawnSync(
      'podman',
      [
        'run',
        '--rm',
        '--network',
        'podman',
        h.config.imagePython,
        'python3',
        '-c',
        ipv6Probe([`${linkLocal}%eth0`], servicePort),
      ],
      { encoding: 'utf8' },
    );
    t.equal(r6.stdout.trim(), `${linkLocal}%eth0 reachable`, `so IPv6 is a way to the host ${r6.stderr}`);
  },
);

const { scenario, runScenarios } = concurrentScenarios(t, 4);

scenario('a scraper that succeeds returns its CSV, rows and logs', async (t) => {
  const { statusCode, body } = await h.run(
    py(`
from chronomap.scraper import output
import requests, bs4, lxml, pandas, cssselect
print("fetched 2 events")
output.write_rows([{"title": "Concert", "city": "Berlin"}, {"title": "Fair, big", "city": "Köln"}])
output.save()
`),
  );
  t.equal(statusCode, 200);
  t.equal(body.status, 'success');
  t.equal(body.exit_code, 0);
  t.equal(body.stdout, 'fetched 2 events\n');
  t.equal(body.output?.rows, 2);
  t.equal(csvOf(body), 'title,city\r\nConcert,Berlin\r\n"Fair, big",Köln\r\n');
  t.equal(body.output?.bytes, Buffer.byteLength(csvOf(body)));
});

scenario(
  'a node scraper with cheerio, axios and the helper succeeds, with a custom output file',
  async (t) => {
    const { body } = await h.run({
      runtime: 'node',
      entrypoint: 'src/index.mjs',
      output_file: 'events.csv',
      env: { GREETING: 'multi word value = fine' },
      code: {
        'src/index.mjs': `
import * as cheerio from 'cheerio';
import axios from 'axios';
import { output } from '@chronomap/scraper';
const $ = cheerio.load('<ul><li>One</li><li>Two</li></ul>');
$('li').each((_, el) => output.writeRow({ title: $(el).text(), axios: typeof axios.get, greeting: process.env.GREETING }));
console.log(output.save());
`,
      },
    });
    t.equal(body.status, 'success', body.stderr);
    t.equal(body.stdout, '/output/events.csv\n');
    t.same(csvRecords(body), [
      ['title', 'axios', 'greeting'],
      ['One', 'function', 'multi word value = fine'],
      ['Two', 'function', 'multi word value = fine'],
    ]);
  },
);

scenario('a scraper that exits 1 fails with its exit code and stderr', async (t) => {
  const { body } = await h.run(py('import sys\nprint("boom", file=sys.stderr)\nsys.exit(1)\n'));
  t.equal(body.status, 'failed');
  t.equal(body.exit_code, 1);
  t.equal(body.code, 'EXIT_CODE');
  t.equal(body.stderr, 'boom\n');
  t.notOk(body.output);
});

scenario('a scraper that sleeps past its timeout is stopped and reported as timeout', async (t) => {
  const { body } = await h.run({
    ...py('import time\nprint("waiting", flush=True)\ntime.sleep(120)\n'),
    limits: { timeout_secs: 2 },
  });
  t.equal(body.status, 'timeout');
  t.equal(body.code, 'TIMEOUT');
  t.equal(body.stdout, 'waiting\n');
});

scenario('a scraper that never calls save fails with INVALID_OUTPUT', async (t) => {
  const { body } = await h.run(py('from chronomap.scraper import output\noutput.write_row({"a": 1})\n'));
  t.equal(body.status, 'failed');
  t.equal(body.code, 'INVALID_OUTPUT');
  t.match(body.error, /save\(\)/);
});

scenario('a scraper writing 200 MB is stopped at the output cap', async (t) => {
  const { body } = await h.run(
    py(`
import errno
chunk = b"a,b\\n" * 262144
written = 0
try:
    with open("/output/data.csv", "wb") as f:
        while written < 200 * 1024 * 1024:
            f.write(chunk); f.flush(); written += len(chunk)
except OSError as e:
    print("stopped by", errno.errorcode.get(e.errno), "after", written)
    raise SystemExit(0)
`),
  );
  t.equal(body.status, 'failed');
  t.equal(body.code, 'INVALID_OUTPUT');
  t.match(body.error, /larger than SCRAPER_MAX_OUTPUT_SIZE_MB \(5 MB\)/);
});

scenario('a scraper writing 200 MB to /tmp hits the 64 MB tmpfs', async (t) => {
  // 1 MB files, each below the per-file size limit (the output cap), so the tmpfs size is what stops it.
  const { body } = await h.run(
    py(`
import errno
from chronomap.scraper import output
result = "no error"
try:
    for i in range(200):
        with open(f"/tmp/big{i}", "wb") as f:
            f.write(b"x" * 1024 * 1024)
except OSError as e:
    result = errno.errorcode.get(e.errno)
output.write_row({"result": result})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  t.same(csvRecords(body)[1], ['ENOSPC']);
});

scenario('a fork bomb is held by the pids limit', async (t) => {
  const { body } = await h.run({
    ...py(`
import os, time
from chronomap.scraper import output
children, error = 0, "none"
while children < 2000:
    try:
        pid = os.fork()
    except OSError as e:
        error = e.strerror
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children += 1
output.write_row({"children": children, "error": error})
output.save()
os._exit(0)
`),
    limits: { timeout_secs: 30 },
  });
  t.equal(body.status, 'success', body.stderr);
  const [children, error] = csvRecords(body)[1] ?? [];
  t.ok(Number(children) < 256, `forked ${children} children before: ${error}`);
  t.equal(error, 'Resource temporarily unavailable');
});

scenario('a scraper allocating past its memory limit is killed', async (t) => {
  const { body } = await h.run({
    ...py('data = "x" * (400 * 1024 * 1024)\nprint(len(data))\n'),
    limits: { memory_mb: 64 },
  });
  t.equal(body.status, 'failed');
  t.equal(body.exit_code, 137);
  t.equal(body.code, 'KILLED');
  t.match(body.error, /64 MB memory limit/);
});

scenario('writes outside /output and /tmp fail, executing from /tmp fails', async (t) => {
  const { body } = await h.run(
    py(`
import os, shutil, subprocess
from chronomap.scraper import output
for path in ["/scraper/x", "/etc/x", "/x", "/usr/lib/x", "/root/x", "/var/x"]:
    try:
        open(path, "w").write("x")
        result = "written"
    except OSError as e:
        result = type(e).__name__
    output.write_row({"what": "write " + path, "result": result})
shutil.copy("/bin/true", "/tmp/true")
os.chmod("/tmp/true", 0o755)
with open("/tmp/run.sh", "w") as f:
    f.write("#!/bin/sh\\necho ran\\n")
os.chmod("/tmp/run.sh", 0o755)
for path in ["/tmp/true", "/tmp/run.sh"]:
    try:
        subprocess.run([path], check=True)
        result = "executed"
    except OSError as e:
        result = type(e).__name__
    output.write_row({"what": "exec " + path, "result": result})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  const results = Object.fromEntries(
    csvRecords(body)
      .slice(1)
      .map(([what, result]) => [what, result]),
  );
  for (const path of ['/scraper/x', '/etc/x', '/x', '/usr/lib/x', '/root/x', '/var/x']) {
    t.not(results[`write ${path}`], 'written', `write ${path} refused (${results[`write ${path}`]})`);
  }
  t.equal(results['exec /tmp/true'], 'PermissionError');
  t.equal(results['exec /tmp/run.sh'], 'PermissionError');
});

scenario('syscalls outside the seccomp allow-list fail with EPERM', async (t) => {
  const { body } = await h.run(
    py(`
import ctypes, os
from chronomap.scraper import output
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, call):
    ctypes.set_errno(0)
    rc = call()
    output.write_row({"call": name, "rc": rc, "errno": ctypes.get_errno()})
attempt("unshare", lambda: libc.unshare(0x10000000))            # CLONE_NEWUSER
attempt("mount", lambda: libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
attempt("ptrace", lambda: libc.ptrace(0, 0, None, None))       # PTRACE_TRACEME
attempt("setns", lambda: libc.setns(0, 0))
seccomp = [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0]
output.write_row({"call": "seccomp-mode", "rc": seccomp, "errno": 0})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  const rows = csvRecords(body).slice(1);
  for (const [call, rc, errno] of rows.slice(0, 4))
    t.same([call, rc, errno], [call, '-1', '1'], `${call} refused with EPERM`);
  t.same(rows[4], ['seccomp-mode', '2', '0'], 'the process runs under a seccomp filter');
});

scenario('the host and its services are unreachable from the sandbox', async (t) => {
  const targets = [
    ['127.0.0.1', servicePort],
    [gateway, servicePort],
    [hostAddress, servicePort],
    [gateway, 5432],
    [hostAddress, 5432],
    ['127.0.0.1', 5432],
    [gateway, runnerApiPort],
    [hostAddress, runnerApiPort],
  ];
  const { body } = await h.run(
    py(`
import socket, concurrent.futures
from chronomap.scraper import output
targets = ${JSON.stringify(targets)}
def probe(target):
    try:
        socket.create_connection(tuple(target), timeout=2).close()
        return "reachable"
    except OSError as e:
        return type(e).__name__
with concurrent.futures.ThreadPoolExecutor(len(targets)) as pool:
    for target, result in zip(targets, pool.map(probe, targets)):
        output.write_row({"target": f"{target[0]}:{target[1]}", "result": result})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  for (const [target, result] of csvRecords(body).slice(1))
    t.not(result, 'reachable', `${target}: ${result}`);
});

scenario('IPv6 does not lead to the host either: the sandbox has none', async (t) => {
  // The bridge appears with the network's first container.
  if (!bridgeLinkLocal(h.config.network)) await h.run(py('pass\n'));
  const linkLocal = bridgeLinkLocal(h.config.network);
  t.ok(linkLocal, 'the sandbox bridge has an IPv6 link-local address on the host');
  const targets = [`${linkLocal}%eth0`, '::1', ...hostGlobalIpv6];
  const { body } = await h.run(
    py(`
from chronomap.scraper import output
with open("/proc/net/if_inet6") as f:
    output.write_row({"target": "ipv6 addresses", "result": len(f.read().splitlines())})
${ipv6Probe(targets, servicePort, 'output.write_row({"target": host, "result": probe(host)})')}
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  const rows = csvRecords(body).slice(1);
  t.same(rows[0], ['ipv6 addresses', '0'], 'no IPv6 address inside the container, not even ::1');
  t.equal(rows.length, targets.length + 1);
  for (const [target, result] of rows.slice(1)) t.notMatch(result, /reachable/, `${target}: ${result}`);
});

scenario('the host firewall alone drops IPv6 from the sandbox network', async (t) => {
  // IPv6 left on inside the container (no --sysctl): only the firewall stands in the way.
  if (!bridgeLinkLocal(h.config.network)) await h.run(py('pass\n'));
  const linkLocal = bridgeLinkLocal(h.config.network);
  t.ok(linkLocal, 'the sandbox bridge has an IPv6 link-local address on the host');
  const r = spawnSync(
    'podman',
    [
      'run',
      '--rm',
      '--network',
      h.config.network,
      h.config.imagePython,
      'python3',
      '-c',
      ipv6Probe([`${linkLocal}%eth0`], servicePort),
    ],
    { encoding: 'utf8' },
  );
  t.match(r.stdout, `${linkLocal}%eth0 TimeoutError`, `dropped, not refused: ${r.stderr}`);
});

scenario('outbound traffic to an outside address is allowed', async (t) => {
  const { body } = await h.run(
    py(`
import socket
from chronomap.scraper import output
for attempt in range(20):
    try:
        c = socket.create_connection(("${WAN_ADDRESS}", 8080), timeout=3)
        break
    except ConnectionRefusedError:
        import time; time.sleep(0.25)  # the stand-in host may still be starting
output.write_row({"reply": c.recv(100).decode()})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  t.same(csvRecords(body)[1], ['hello from the outside']);
});

scenario('packages cannot be installed at run time', async (t) => {
  const python = await h.run(
    py(`
import subprocess
from chronomap.scraper import output
for cmd in (["pip", "install", "six"], ["pip3", "install", "six"], ["python3", "-m", "pip", "install", "six"], ["python3", "-m", "ensurepip"], ["apt-get", "install", "curl"]):
    try:
        result = "exit %d" % subprocess.run(cmd, capture_output=True).returncode
    except OSError as e:
        result = type(e).__name__
    output.write_row({"cmd": " ".join(cmd), "result": result})
output.save()
`),
  );
  t.equal(python.body.status, 'success', python.body.stderr);
  t.same(
    csvRecords(python.body)
      .slice(1)
      .map((r) => r[1]),
    ['FileNotFoundError', 'FileNotFoundError', 'exit 1', 'exit 1', 'FileNotFoundError'],
  );
  const node = await h.run({
    runtime: 'node',
    entrypoint: 'main.cjs',
    code: {
      'main.cjs': `
const { spawnSync } = require('node:child_process');
const { output } = require('@chronomap/scraper');
for (const cmd of ['npm', 'npx', 'yarn', 'corepack']) {
  const r = spawnSync(cmd, ['install', 'left-pad']);
  output.writeRow({ cmd, result: r.error ? r.error.code : 'exit ' + r.status });
}
output.save();
`,
    },
  });
  t.equal(node.body.status, 'success', node.body.stderr);
  t.same(
    csvRecords(node.body)
      .slice(1)
      .map((r) => r[1]),
    ['ENOENT', 'ENOENT', 'ENOENT', 'ENOENT'],
  );
});

scenario('an output file that is a symlink to a host file is refused', async (t) => {
  // symlink() is not in the seccomp allow-list; a link planted from outside is refused by the
  // runner (escape.test.ts).
  const { body } = await h.run(py('import os\nos.symlink("/etc/passwd", "/output/data.csv")\n'));
  t.equal(body.status, 'failed');
  t.equal(body.code, 'EXIT_CODE');
  t.match(body.stderr, /PermissionError: \[Errno 1\] Operation not permitted/);
  t.notOk(body.output);
});

scenario('invalid CSV and a missing header fail with INVALID_OUTPUT', async (t) => {
  const ragged = await h.run(py('open("/output/data.csv", "w").write("a,b\\n1,2,3\\n")\n'));
  t.equal(ragged.body.code, 'INVALID_OUTPUT');
  t.match(ragged.body.error, /not valid CSV/);
  const empty = await h.run(py('from chronomap.scraper import output\noutput.save()\n'));
  t.equal(empty.body.code, 'INVALID_OUTPUT');
  t.match(empty.body.error, /header/);
});

scenario('a missing entrypoint fails before any container starts', async (t) => {
  const { body } = await h.run({ runtime: 'python', entrypoint: 'nope.py', code: { 'main.py': 'print(1)' } });
  t.equal(body.status, 'failed');
  t.equal(body.code, 'ENTRYPOINT_NOT_FOUND');
});

scenario('status and stop of an active run', async (t) => {
  const runId = crypto.randomUUID();
  const running = h.run({ ...py('import time\ntime.sleep(120)\n'), run_id: runId });
  let status;
  for (let i = 0; i < 100; i++) {
    status = (
      await h.app.inject({
        method: 'GET',
        url: `/status/${runId}`,
        headers: { authorization: `Bearer ${h.config.apiKey}` },
      })
    ).json();
    if (status.phase === 'running') break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.match(status, { run_id: runId, active: true, phase: 'running', stopping: false });
  const stop = await h.app.inject({
    method: 'POST',
    url: `/stop/${runId}`,
    headers: { authorization: `Bearer ${h.config.apiKey}` },
  });
  t.equal(stop.statusCode, 200);
  t.same(stop.json(), { run_id: runId, stopping: true });
  const { body } = await running;
  t.equal(body.status, 'failed');
  t.equal(body.code, 'STOPPED');
  const after = await h.app.inject({
    method: 'GET',
    url: `/status/${runId}`,
    headers: { authorization: `Bearer ${h.config.apiKey}` },
  });
  t.same(after.json(), { run_id: runId, active: false });
});

// Four at a time: the harness's concurrency limit.
await runScenarios();

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), [], 'every workspace was removed');
  t.same(h.containers(), [], 'no container of this runner remains');
  const m = h.runs.metrics();
  t.equal(m.active_runs, 0);
  t.ok(m.total_runs >= 17);
  t.equal(m.total_runs, m.total_success + m.total_failed + m.total_timeout);
});

// The escape suite (issue 17): attacks on what the runner does on the host and on the caps
// around a run, each asserting containment and that nothing is left behind. Real podman.
import { createHash } from 'node:crypto';
import t from 'tap';
import { fileFlood, outputFlood, peakOutputBytes, plantRootLink } from './support/attacks.ts';
import { csvRecords, makeHarness, py } from './support/harness.ts';
import { withStreamCheck } from './support/stream-check.ts';
import { WAN_ADDRESS, startWanHost } from './support/wan-host.ts';

const MAX_OUTPUT_MB = 5;
const MAX_FILES = 100;
const h = makeHarness({
  SCRAPER_MAX_CONCURRENT: '3',
  SCRAPER_MAX_OUTPUT_SIZE_MB: String(MAX_OUTPUT_MB),
  SCRAPER_MAX_OUTPUT_FILES: String(MAX_FILES),
  SCRAPER_DEFAULT_TIMEOUT: '60',
});
t.teardown(() => h.close());
t.teardown(startWanHost());

t.test('a symlink to / in /output fails the run at once; the watcher never walks the host', async (t) => {
  // The scraper cannot make a link (seccomp), so it is planted from the host, as a scraper
  // finding another way would.
  const running = h.run(py('import time\nprint("waiting", flush=True)\ntime.sleep(120)\n'));
  t.ok(await plantRootLink(h.dataDir), "the link was planted in the running scraper's /output");
  const { body } = await running;
  t.equal(body.status, 'failed', 'stopped by the watcher, not by the 60 s timeout');
  t.equal(body.code, 'OUTPUT_LINK');
  t.match(body.error, /symbolic link or a special file/);
});

t.test('the calls left out of the seccomp allow-list fail; shells work', async (t) => {
  const { body } = await h.run(
    py(`
import ctypes, errno, os, socket, subprocess
from chronomap.scraper import output
libc = ctypes.CDLL(None, use_errno=True)
def attempt(name, call):
    try:
        call()
        result = "allowed"
    except OSError as e:
        result = errno.errorcode.get(e.errno)
    output.write_row({"call": name, "result": result})
def c(name, rc):
    if rc == -1:
        raise OSError(ctypes.get_errno(), name)
attempt("memfd_create", lambda: os.memfd_create("x"))
attempt("symlink", lambda: os.symlink("/", "/tmp/root"))
attempt("link", lambda: os.link("/scraper/main.py", "/tmp/hard"))
attempt("mknod fifo", lambda: os.mkfifo("/tmp/fifo"))
attempt("inotify_init1", lambda: c("inotify", libc.inotify_init1(0)))
attempt("timerfd_create", lambda: c("timerfd", libc.timerfd_create(1, 0)))
def serve():
    s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen()
attempt("listen", serve)
attempt("socket AF_VSOCK", lambda: socket.socket(40, socket.SOCK_STREAM))
attempt("socket AF_PACKET", lambda: socket.socket(17, socket.SOCK_DGRAM))
attempt("socket AF_INET", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
attempt("socket AF_UNIX", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
output.write_row({"call": "os.system", "result": os.system("echo from a shell > /tmp/shell.txt")})
output.write_row({"call": "shell=True", "result": subprocess.run("cat /tmp/shell.txt | tr a-z A-Z", shell=True, capture_output=True, text=True).stdout.strip()})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  t.same(Object.fromEntries(csvRecords(body).slice(1)), {
    memfd_create: 'EPERM',
    symlink: 'EPERM',
    link: 'EPERM',
    'mknod fifo': 'EPERM',
    inotify_init1: 'EPERM',
    timerfd_create: 'EPERM',
    listen: 'EPERM',
    'socket AF_VSOCK': 'EPERM',
    'socket AF_PACKET': 'EPERM',
    'socket AF_INET': 'allowed',
    'socket AF_UNIX': 'allowed',
    'os.system': '0',
    'shell=True': 'FROM A SHELL',
  });
  const node = await h.run({
    runtime: 'node',
    entrypoint: 'main.mjs',
    code: {
      'main.mjs': `
import { exec, execSync } from 'node:child_process';
import { promisify } from 'node:util';
import { output } from '@chronomap/scraper';
output.writeRow({ how: 'execSync', out: execSync('echo one | tr a-z A-Z').toString().trim() });
output.writeRow({ how: 'exec', out: (await promisify(exec)('echo two')).stdout.trim() });
output.save();
`,
    },
  });
  t.equal(node.body.status, 'success', node.body.stderr);
  t.same(csvRecords(node.body).slice(1), [
    ['execSync', 'ONE'],
    ['exec', 'two'],
  ]);
});

t.test('four writers ignoring SIGTERM cannot put more than the cap + 1 MB on the host', async (t) => {
  const { result, peak } = await peakOutputBytes(h.dataDir, h.run(py(outputFlood(MAX_OUTPUT_MB))));
  t.equal(result.body.status, 'failed');
  t.equal(result.body.code, 'INVALID_OUTPUT');
  t.match(result.body.error, /larger than SCRAPER_MAX_OUTPUT_SIZE_MB \(5 MB\)/);
  t.match(result.body.stderr, 'stopped by ENOSPC', 'the kernel refused the writes past the cap');
  t.ok(peak > 0, 'the flood was observed');
  t.ok(peak <= (MAX_OUTPUT_MB + 1) * 1024 * 1024, `at most the cap + 1 MB on the host (peak ${peak} bytes)`);
});

t.test('a flood of empty files stops at the file cap', async (t) => {
  const { body } = await h.run(py(fileFlood));
  t.equal(body.status, 'failed');
  t.equal(body.code, 'INVALID_OUTPUT');
  t.match(body.error, `more than SCRAPER_MAX_OUTPUT_FILES (${MAX_FILES}) entries`);
  const created = Number(/stopped by ENOSPC after (\d+)/.exec(body.stderr)?.[1]);
  t.ok(created > MAX_FILES && created <= MAX_FILES + 1, `the kernel stopped it after ${created} files`);
});

t.test('/tmp has a size and an inode cap; there is no /dev/shm', async (t) => {
  const { body } = await h.run(
    py(`
import errno, os
from chronomap.scraper import output
n, result = 0, "none"
try:
    while n < 100000:
        open(f"/tmp/e{n}", "w").close()
        n += 1
except OSError as e:
    result = errno.errorcode.get(e.errno)
output.write_row({"what": "tmp files", "n": n, "result": result})
output.write_row({"what": "/dev/shm exists", "n": int(os.path.exists("/dev/shm")), "result": ""})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  const [files, shm] = csvRecords(body).slice(1);
  t.equal(files?.[2], 'ENOSPC');
  t.ok(Number(files?.[1]) < 4096, `stopped after ${files?.[1]} files`);
  t.same(shm, ['/dev/shm exists', '0', '']);
});

t.test('an oversized env value is a 400, not a sandbox error', async (t) => {
  const big = await h.run({ ...py('pass\n'), env: { BIG: 'x'.repeat(200 * 1024) } });
  t.equal(big.statusCode, 400);
  t.equal(big.body.code, 'INVALID_ENV');
  const fits = await h.run({
    ...py(
      'import os\nfrom chronomap.scraper import output\noutput.write_row({"n": len(os.environ["BIG"])})\noutput.save()\n',
    ),
    env: { BIG: 'x'.repeat(30 * 1024) },
  });
  t.equal(fits.body.status, 'success', fits.body.stderr);
  t.same(csvRecords(fits.body)[1], [String(30 * 1024)]);
});

t.test('package registries are unreachable by name: DNS, TLS and HTTP naming them are dropped', async (t) => {
  // The stand-in outside host answers every DNS query, TLS ClientHello and HTTP request: what
  // gets no answer was dropped by the host's firewall (CHRONOMAP_REGISTRY). TCP 443 and 80 go
  // through the stream check (stream-check-sandbox.test.ts has the split-packet attacks).
  await withStreamCheck(t, h.config);
  const names = [
    'example.org',
    'registry.npmjs.org',
    'ReGiStRy.NpMjS.oRg',
    'registry.yarnpkg.com',
    'pypi.org',
    'files.pythonhosted.org',
    'cdn.jsdelivr.net',
  ];
  const { body } = await h.run(
    py(`
import concurrent.futures, socket, ssl, struct
from chronomap.scraper import output
WAN = "${WAN_ADDRESS}"
def dns(name):
    query = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0)
    query += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\\0" + struct.pack(">HH", 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(query, (WAN, 53))
    try:
        return "answered" if s.recv(4096) == query else "garbled"
    except TimeoutError:
        return "dropped"
def tls(name):
    c = socket.create_connection((WAN, 443), timeout=3)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        ctx.wrap_socket(c, server_hostname=name)
        return "handshake"
    except TimeoutError:
        return "dropped"
    except (ssl.SSLError, ConnectionError):
        return "answered"
def http(name):
    c = socket.create_connection((WAN, 80), timeout=3)
    c.sendall(f"GET / HTTP/1.1\\r\\nHost: {name}\\r\\n\\r\\n".encode())
    try:
        return "answered" if c.recv(10) else "closed"
    except TimeoutError:
        return "dropped"
jobs = [(kind, name) for name in ${JSON.stringify(names)} for kind in ("dns", "tls", "http")]
with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
    results = pool.map(lambda job: {"dns": dns, "tls": tls, "http": http}[job[0]](job[1]), jobs)
    for (kind, name), result in zip(jobs, results):
        output.write_row({"kind": kind, "name": name, "result": result})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  for (const [kind, name, result] of csvRecords(body).slice(1))
    t.equal(result, name === 'example.org' ? 'answered' : 'dropped', `${kind} ${name}`);
});

t.test(
  'no privileges, a remapped user, and the CPU, memory and pids limits as the kernel sees them',
  async (t) => {
    const { body } = await h.run({
      ...py(`
import os
from chronomap.scraper import output
status = dict(l.split(":", 1) for l in open("/proc/self/status"))
for field in ("CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"):
    output.write_row({"what": field, "value": status[field].strip()})
inside, outside, count = open("/proc/self/uid_map").read().split()
output.write_row({"what": "uid 0 is host uid", "value": outside})
def read(*paths):
    for path in paths:
        if os.path.exists(path):
            return open(path).read().strip()
    return "missing"
v2 = os.path.exists("/sys/fs/cgroup/cgroup.controllers")
if v2:
    quota, period = read("/sys/fs/cgroup/cpu.max").split()
else:
    quota, period = read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
output.write_row({"what": "cpus", "value": int(quota) / int(period)})
output.write_row({"what": "memory bytes", "value": read("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")})
output.write_row({"what": "pids", "value": read("/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max")})
output.save()
`),
      limits: { memory_mb: 128 },
    });
    t.equal(body.status, 'success', body.stderr);
    const values = Object.fromEntries(csvRecords(body).slice(1));
    for (const cap of ['CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) t.equal(values[cap], '0000000000000000', cap);
    t.equal(values.NoNewPrivs, '1');
    t.equal(values.Seccomp, '2');
    t.ok(
      Number(values['uid 0 is host uid']) >= 65536,
      `root inside is uid ${values['uid 0 is host uid']} on the host`,
    );
    t.equal(Number(values.cpus), h.config.cpus);
    t.equal(values['memory bytes'], String(128 * 1024 * 1024));
    t.equal(values.pids, '256');
  },
);

t.test('no setuid or setgid file in either image', async (t) => {
  const scan = `
import os, stat
root_dev = os.stat("/").st_dev
found = []
for top, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if os.lstat(os.path.join(top, d)).st_dev == root_dev]
    for name in files:
        try:
            mode = os.lstat(os.path.join(top, name)).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode) and mode & (stat.S_ISUID | stat.S_ISGID):
            found.append(os.path.join(top, name))
print(" ".join(found) or "none")
`;
  const python = await h.run(py(scan));
  t.equal(python.body.stdout.trim(), 'none', 'runner-python');
  // The Node image has no Python: the same scan in Node.
  const node = await h.run({
    runtime: 'node',
    entrypoint: 'main.cjs',
    code: {
      'main.cjs': `
const fs = require('node:fs');
const path = require('node:path');
const rootDev = fs.statSync('/').dev;
const found = [];
const walk = (dir) => {
  let entries = [];
  try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    let s;
    try { s = fs.lstatSync(p); } catch { continue; }
    if (s.dev !== rootDev) continue;
    if (e.isDirectory()) walk(p);
    else if (e.isFile() && (s.mode & 0o6000) !== 0) found.push(p);
  }
};
walk('/');
console.log(found.join(' ') || 'none');
`,
    },
  });
  t.equal(node.body.stdout.trim(), 'none', 'runner-node');
});

t.test('a CSV of several base64 chunks, of a length that is no multiple of 3, arrives whole', async (t) => {
  const { body } = await h.run(
    py(`
import hashlib
data = "n,text\\r\\n" + "".join(f"{i},row {i} é\\r\\n" for i in range(150000)) + "x,y"
with open("/output/data.csv", "w", newline="") as f:
    f.write(data)
raw = data.encode()
print(len(raw) % 3, len(raw), hashlib.sha256(raw).hexdigest())
`),
  );
  t.equal(body.status, 'success', body.stderr);
  const [remainder, length, digest] = body.stdout.trim().split(' ');
  t.not(remainder, '0', 'the length is no multiple of 3');
  const csv = Buffer.from(body.output?.content_base64 ?? '', 'base64');
  t.equal(csv.length, Number(length));
  t.ok(csv.length > 3 * 786432, 'more than three chunks');
  t.equal(createHash('sha256').update(csv).digest('hex'), digest);
  t.equal(body.output?.bytes, Number(length));
  t.equal(body.output?.rows, 150001);
});

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), [], 'every workspace was removed');
  t.same(h.containers(), [], 'no container of this runner remains');
});

// The escape suite (issue 17): attacks on what the runner does on the host and on the caps
// around a run, each asserting containment and that nothing is left behind. Real podman.
import { statfsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { csvRecords, makeHarness, py } from './support/harness.ts';
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

const TMPFS_MAGIC = 0x01021994;

/** The most bytes any run's /output file system held while `during` ran (polled every 10 ms). */
async function peakOutputBytes<T>(during: Promise<T>): Promise<{ result: T; peak: number }> {
  let peak = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      for (const name of h.workspaces()) {
        try {
          const fs = statfsSync(join(h.dataDir, name, 'output'));
          // Only once the run's tmpfs is mounted there (before, it is the host's own disk).
          if (fs.type === TMPFS_MAGIC) peak = Math.max(peak, (fs.blocks - fs.bfree) * fs.bsize);
        } catch {
          // not there yet, or already removed
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const result = await during;
  done = true;
  await poll;
  return { result, peak };
}

t.test('a symlink to / in /output fails the run at once; the watcher never walks the host', async (t) => {
  const { body } = await h.run(py('import os, time\nos.symlink("/", "/output/x")\ntime.sleep(120)\n'));
  t.equal(body.status, 'failed', 'stopped by the watcher, not by the 60 s timeout');
  t.equal(body.code, 'OUTPUT_LINK');
  t.match(body.error, /symbolic link or a special file/);
});

t.test('special files cannot be made in /output (mknod is not allowed)', async (t) => {
  const { body } = await h.run(
    py(`
import errno, os
from chronomap.scraper import output
try:
    os.mkfifo("/output/pipe")
    result = "made"
except OSError as e:
    result = errno.errorcode.get(e.errno)
output.write_row({"mkfifo": result})
output.save()
`),
  );
  t.equal(body.status, 'success', body.stderr);
  t.same(csvRecords(body)[1], ['EPERM']);
});

t.test('four writers ignoring SIGTERM cannot put more than the cap + 1 MB on the host', async (t) => {
  const { result, peak } = await peakOutputBytes(
    h.run(
      py(`
import errno, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for _ in range(3):
    if os.fork() == 0:
        break
block = b"x" * (1024 * 1024)
n = 0
while True:
    try:
        with open(f"/output/f{os.getpid()}-{n}", "wb", buffering=0) as f:
            for _ in range(${MAX_OUTPUT_MB}):
                f.write(block)
    except OSError as e:
        print("stopped by", errno.errorcode.get(e.errno), file=sys.stderr, flush=True)
        time.sleep(0.05)
    n += 1
`),
    ),
  );
  t.equal(result.body.status, 'failed');
  t.equal(result.body.code, 'INVALID_OUTPUT');
  t.match(result.body.error, /larger than SCRAPER_MAX_OUTPUT_SIZE_MB \(5 MB\)/);
  t.match(result.body.stderr, 'stopped by ENOSPC', 'the kernel refused the writes past the cap');
  t.ok(peak > 0, 'the flood was observed');
  t.ok(peak <= (MAX_OUTPUT_MB + 1) * 1024 * 1024, `at most the cap + 1 MB on the host (peak ${peak} bytes)`);
});

t.test('a flood of empty files stops at the file cap', async (t) => {
  const { body } = await h.run(
    py(`
import errno, sys, time
n = 0
try:
    while n < 300000:
        open(f"/output/e{n}", "w").close()
        n += 1
except OSError as e:
    print("stopped by", errno.errorcode.get(e.errno), "after", n, file=sys.stderr, flush=True)
time.sleep(120)
`),
  );
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
  // gets no answer was dropped by the host's firewall (CHRONOMAP_REGISTRY).
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

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), [], 'every workspace was removed');
  t.same(h.containers(), [], 'no container of this runner remains');
});

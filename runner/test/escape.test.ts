// The escape suite (issue 17): attacks on what the runner does on the host and on the caps
// around a run, each asserting containment and that nothing is left behind. Real podman.
import { statfsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { csvRecords, makeHarness, py } from './support/harness.ts';

const MAX_OUTPUT_MB = 5;
const MAX_FILES = 100;
const h = makeHarness({
  SCRAPER_MAX_CONCURRENT: '3',
  SCRAPER_MAX_OUTPUT_SIZE_MB: String(MAX_OUTPUT_MB),
  SCRAPER_MAX_OUTPUT_FILES: String(MAX_FILES),
  SCRAPER_DEFAULT_TIMEOUT: '60',
});
t.teardown(() => h.close());

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

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), [], 'every workspace was removed');
  t.same(h.containers(), [], 'no container of this runner remains');
});

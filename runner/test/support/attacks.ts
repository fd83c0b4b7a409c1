// Attacks on the host side of the sandbox, shared by the escape suite (runner/test/escape.test.ts)
// and the benchmark that measures them (bench/runner/host-caps.ts).
import { readdirSync, statfsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

const TMPFS_MAGIC = 0x01021994;

/** Four processes ignoring SIGTERM writing 1 MB blocks into new files of `fileMb` MB each. */
export const outputFlood = (fileMb: number) => `
import errno, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
for _ in range(3):
    if os.fork() == 0:
        break
block = b"x" * (1024 * 1024)
n, told = 0, False
while True:
    try:
        with open(f"/output/f{os.getpid()}-{n}", "wb", buffering=0) as f:
            for _ in range(${fileMb}):
                f.write(block)
    except OSError as e:
        if not told:
            print("stopped by", errno.errorcode.get(e.errno), file=sys.stderr, flush=True)
            told = True
        time.sleep(0.01)
    n += 1
`;

/** Up to 300,000 empty files in /output; says when and why it stopped, then waits. */
export const fileFlood = `
import errno, sys, time
start = time.monotonic()
n = 0
try:
    while n < 300000:
        open(f"/output/e{n}", "w").close()
        n += 1
except OSError as e:
    print(f"stopped by {errno.errorcode.get(e.errno)} after {n} files in {(time.monotonic() - start) * 1000:.0f} ms", file=sys.stderr, flush=True)
time.sleep(120)
`;

/** The capped /output mounts of the runs under `dataDir` (a run's directory before it is mounted is not one). */
function mountedOutputs(dataDir: string): string[] {
  const outputs: string[] = [];
  for (const name of readdirSync(dataDir)) {
    try {
      const output = join(dataDir, name, 'output');
      if (statfsSync(output).type === TMPFS_MAGIC) outputs.push(output);
    } catch {
      // not there yet, or already removed
    }
  }
  return outputs;
}

/** The most bytes any run's /output held on the host while `during` ran (polled every 5 ms). */
export async function peakOutputBytes<T>(
  dataDir: string,
  during: Promise<T>,
): Promise<{ result: T; peak: number }> {
  let peak = 0;
  let done = false;
  const poll = (async () => {
    while (!done) {
      for (const output of mountedOutputs(dataDir)) {
        const fs = statfsSync(output, { bigint: false });
        peak = Math.max(peak, (fs.blocks - fs.bfree) * fs.bsize);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const result = await during;
  done = true;
  await poll;
  return { result, peak };
}

/**
 * Plants a symlink to `/` in the /output of a run that is running (a scraper cannot make one:
 * seccomp; this stands for one that found another way). Resolves once planted, false after 10 s.
 */
export async function plantRootLink(dataDir: string): Promise<boolean> {
  for (let i = 0; i < 500; i++) {
    const [output] = mountedOutputs(dataDir);
    if (output !== undefined) {
      symlinkSync('/', join(output, 'x'));
      return true;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

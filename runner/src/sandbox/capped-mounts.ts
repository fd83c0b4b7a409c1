// Per-run file systems whose size and inode count the kernel enforces: a host tmpfs mounted on
// the workspace's `output` and `tmp` directories (then bind-mounted into the container). A
// flood of bytes or of empty files gets ENOSPC at the cap, in the scraper's own write(), not
// when the runner's watcher next looks. podman 4.3's `--tmpfs` refuses `nr_inodes`, and a
// container-side tmpfs vanishes with the container before the runner could read /output,
// hence host mounts. Mounting needs root (the runner's usual mode; see docs/runner.md).
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** The mount source shown in /proc/self/mountinfo, so leftovers of a crash can be found. */
export const MOUNT_SOURCE = 'chronomap-run';

export interface TmpfsCaps {
  bytes: number;
  inodes: number;
  /** Mode of the mount's root (0755 unless given). */
  mode?: number;
}

function run(cmd: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', (err) => resolve({ code: -1, stderr: err.message }));
    child.on('close', (code) => resolve({ code: code ?? -1, stderr }));
  });
}

/** Whether this process can mount the capped file systems (it must be root). */
export function canMountCapped(): boolean {
  return process.getuid?.() === 0;
}

export async function mountCapped(dir: string, caps: TmpfsCaps): Promise<void> {
  const options = [
    `size=${Math.ceil(caps.bytes / 4096) * 4096}`,
    `nr_inodes=${caps.inodes}`,
    `mode=${(caps.mode ?? 0o755).toString(8)}`,
    'nosuid',
    'nodev',
    'noexec',
  ].join(',');
  const result = await run('mount', ['-t', 'tmpfs', '-o', options, MOUNT_SOURCE, dir]);
  if (result.code !== 0) throw new Error(`cannot mount a capped tmpfs on ${dir}: ${result.stderr.trim()}`);
}

/** Unmounts `dir` if it is a mount point (lazily when still busy). */
export async function unmountCapped(dir: string): Promise<void> {
  if (!(await mountPoints()).includes(dir)) return;
  if ((await run('umount', [dir])).code !== 0) await run('umount', ['-l', dir]);
}

/** Mount points of our capped tmpfs, from /proc/self/mountinfo (octal escapes decoded). */
export async function mountPoints(): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  const points: string[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const source = right.split(' ')[1];
    if (source !== MOUNT_SOURCE) continue;
    const point = left.split(' ')[4];
    if (point)
      points.push(point.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8))));
  }
  return points;
}

// Kills a whole process group: git forks helpers (remote-https, index-pack) that would
// otherwise outlive a killed parent and keep writing.
import type { ChildProcess } from 'node:child_process';

export function killGroup(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

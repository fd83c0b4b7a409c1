// Which runner process owns a workspace or a container, in a form that survives pid reuse:
// the pid and the process's start time (in clock ticks since boot, /proc/<pid>/stat field 22).
// After a crash (kill -9, OOM) a restarted runner removes what belongs to owners that are gone.
import { readFileSync } from 'node:fs';

function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may hold spaces: fields start after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** This process, as `<pid>.<start ticks>`. */
export const OWNER = `${process.pid}.${startTicks(process.pid) ?? '0'}`;

/** Whether the process an owner string names is still running (the same process, not a reused pid). */
export function ownerAlive(owner: string): boolean {
  const match = /^(\d+)\.(\d+)$/.exec(owner);
  if (!match) return false;
  return startTicks(Number(match[1])) === match[2];
}

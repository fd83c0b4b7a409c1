import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

// A PostgreSQL cluster that answers nothing, as a host frozen or behind a network black hole looks:
// its postmaster and every process it started (backends, walreceiver, ...) SIGSTOPped. One
// implementation for the primary-stall, primary-time-bounds and replica-time-bounds tests.

export type FrozenCluster = {
  /** The processes stopped: the postmaster first. */
  pids: number[];
  /** SIGCONT to each (safe to call again, and for processes gone meanwhile). */
  thaw(): void;
};

const signal = (pids: number[], name: NodeJS.Signals) => {
  for (const pid of pids) {
    try {
      process.kill(pid, name);
    } catch {
      // gone meanwhile
    }
  }
};

/** Freezes the cluster whose data directory is `dataDir`. */
export function freezeCluster(dataDir: string): FrozenCluster {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  // The postmaster first, so that it forks no process the list below would miss.
  signal([postmaster], 'SIGSTOP');
  const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map(Number);
  signal(children, 'SIGSTOP');
  let pids = [postmaster, ...children];
  return {
    get pids() {
      return pids;
    },
    thaw() {
      signal(pids, 'SIGCONT');
      pids = [];
    },
  };
}

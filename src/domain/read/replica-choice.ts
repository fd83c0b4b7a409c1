// Which database answers a read (docs/scaling.md, "Read replicas"). Reads of the public API may go
// to a hot standby that is caught up enough; a caller who has just written names the primary's
// WAL position after that write (its LSN), and only a standby that has replayed up to it may answer
// them — otherwise the primary does. Pure: the adapter measures, this decides.

/** A PostgreSQL WAL position as a number of bytes (its text form is the adapter's: postgres/wal-position.ts). */
export type Lsn = bigint;

/** What the last probe of a standby found. */
export type ReplicaState = {
  name: string;
  /** False when the probe failed or a query found it unreachable since. */
  reachable: boolean;
  /** The WAL position it has replayed, when reachable. */
  replayed: Lsn | null;
};

export type ReplicaCheck = {
  status: 'ok' | 'lagging' | 'down';
  name: string;
  /** Bytes of WAL the standby has still to replay, behind the primary's position at the probe. */
  lagBytes?: number;
};

/** Whether a standby may answer reads at all: reachable and at most `maxLagBytes` behind. */
export function replicaCheck(state: ReplicaState, primary: Lsn | null, maxLagBytes: number): ReplicaCheck {
  if (!state.reachable || state.replayed === null) return { status: 'down', name: state.name };
  const lag = primary === null || primary < state.replayed ? 0 : Number(primary - state.replayed);
  return { status: lag <= maxLagBytes ? 'ok' : 'lagging', name: state.name, lagBytes: lag };
}

/**
 * The standby to read from, or null for the primary: among those within the lag bound that have
 * replayed the caller's last write (`mustHave`), the next in turn (`turn` spreads the reads).
 */
export function chooseReplica(
  states: readonly ReplicaState[],
  primary: Lsn | null,
  options: { maxLagBytes: number; mustHave: Lsn | null; turn: number },
): string | null {
  const eligible = states.filter(
    (state) =>
      replicaCheck(state, primary, options.maxLagBytes).status === 'ok' &&
      (options.mustHave === null || (state.replayed !== null && state.replayed >= options.mustHave)),
  );
  if (eligible.length === 0) return null;
  return eligible[options.turn % eligible.length]?.name ?? null;
}

// Which database answers a read (docs/scaling.md, "Read replicas"). Reads of the public API may go
// to a hot standby whose data is recent enough (a bound in time); a caller who has just written
// names the primary's WAL position after that write (its LSN), and only a standby that has replayed
// up to it may answer them — otherwise the primary does. Pure: the adapter measures, this decides.

/** A PostgreSQL WAL position as a number of bytes (its text form is the adapter's: postgres/wal-position.ts). */
export type Lsn = bigint;

/** What the last probe of a standby found. */
export type ReplicaState = {
  name: string;
  /** False when the probe failed or a query found it unreachable since. */
  reachable: boolean;
  /** The WAL position it has replayed, when reachable. */
  replayed: Lsn | null;
  /** How old its data may be, at most, in seconds (replicaLagSeconds); null when not known. */
  lagSeconds: number | null;
};

export type ReplicaCheck = {
  status: 'ok' | 'lagging' | 'down';
  name: string;
  /** How old the standby's data may be, at most, when the probe last asked it (seconds). */
  lagSeconds?: number;
  /** Bytes of WAL the standby has still to replay, behind the primary's position at the probe. */
  lagBytes?: number;
};

/** The primary was at `position` or before it at `seenAt` (milliseconds of the prober's steady clock). */
export type PrimarySample = { position: Lsn; seenAt: number };

/**
 * How old a standby's data may be, at most (issue 31 §2), in seconds at `at` (the time its position
 * was read, on the samples' clock): the smaller of two upper bounds, since each fails where the other
 * holds.
 * - 0 when it has replayed the primary's latest position: caught up, however long ago the last
 *   write was (an idle primary leaves the last replayed commit's time old forever).
 * - The prober's own record: the standby holds everything the primary held at the last time it was
 *   seen at or before the replayed position (`history`, oldest first, positions rising).
 * - `sinceLastCommit`: the primary's clock now minus the time stamped in the last commit the
 *   standby replayed (pg_last_xact_replay_timestamp(), both of the primary's clock), for a position
 *   older than the history (a process that just started). Loose after an idle spell, hence the min.
 */
export function replicaLagSeconds(
  replayed: Lsn,
  history: readonly PrimarySample[],
  at: number,
  sinceLastCommit: number | null,
): number | null {
  const latest = history.at(-1);
  if (latest && hasReplayed(replayed, latest.position)) return 0;
  const held = history.findLast((sample) => hasReplayed(replayed, sample.position));
  const bounds = [held ? (at - held.seenAt) / 1000 : null, sinceLastCommit].filter(
    (bound): bound is number => bound !== null && Number.isFinite(bound),
  );
  return bounds.length === 0 ? null : Math.max(0, Math.min(...bounds));
}

const PAGE = 8192n; // XLOG_BLCKSZ
const SEGMENT = 16n * 1024n * 1024n; // the default wal_segment_size

/**
 * Whether a standby that has replayed up to `replayed` has everything the primary had at `position`
 * (its pg_current_wal_insert_lsn()). An insert position at the start of a WAL page points past the
 * page's header (24 bytes, 40 at a segment's start), while replay stops at the page boundary: the
 * same place, else an idle primary whose last record ended on a page boundary would look ahead of
 * its caught-up standby forever.
 */
function hasReplayed(replayed: Lsn, position: Lsn): boolean {
  const afterHeader = position % PAGE === 24n || position % SEGMENT === 40n;
  return replayed >= (afterHeader ? position - (position % PAGE) : position);
}

/** Whether a standby may answer reads at all: reachable and its data at most `maxLagSeconds` old. */
export function replicaCheck(state: ReplicaState, primary: Lsn | null, maxLagSeconds: number): ReplicaCheck {
  if (!state.reachable || state.replayed === null) return { status: 'down', name: state.name };
  const lagBytes = primary === null || primary < state.replayed ? 0 : Number(primary - state.replayed);
  const fresh = state.lagSeconds !== null && state.lagSeconds <= maxLagSeconds;
  return {
    status: fresh ? 'ok' : 'lagging',
    name: state.name,
    ...(state.lagSeconds === null ? {} : { lagSeconds: Math.round(state.lagSeconds * 1000) / 1000 }),
    lagBytes,
  };
}

/**
 * The standby to read from, or null for the primary: among those within the lag bound that have
 * replayed the caller's last write (`mustHave`), the next in turn (`turn` spreads the reads).
 */
export function chooseReplica(
  states: readonly ReplicaState[],
  primary: Lsn | null,
  options: { maxLagSeconds: number; mustHave: Lsn | null; turn: number },
): string | null {
  const eligible = states.filter(
    (state) =>
      replicaCheck(state, primary, options.maxLagSeconds).status === 'ok' &&
      (options.mustHave === null ||
        (state.replayed !== null && hasReplayed(state.replayed, options.mustHave))),
  );
  if (eligible.length === 0) return null;
  return eligible[options.turn % eligible.length]?.name ?? null;
}

import { performance } from 'node:perf_hooks';
import { Type } from 'typebox';
import {
  type Lsn,
  type PrimarySample,
  type ReplicaState,
  replicaLagSeconds,
} from '../../domain/read/replica-choice.ts';
import { DatabaseTimeoutError, withinTime } from './bounded-driver.ts';
import { type DatabasePool, Nullable, row, sql } from './database.ts';
import { parseLsn } from './wal-position.ts';

// The read replicas' probe (docs/scaling.md, "Read replicas"): twice a second it asks the primary
// where its WAL is inserted up to and what its clock says, then every standby what it has replayed
// and the time stamped in the last commit it replayed. Every question has a client-side bound
// (REPLICA_TIMEOUT_MS): a standby that does not answer in time is taken out of the reads at once,
// and a round always ends, so a hung standby can never freeze the probe in its last state (issue 31
// §1). How old a standby's data may be is the domain's replicaLagSeconds, from the positions the
// probe has seen the primary at and when.

const PrimaryRow = row(Type.Object({ lsn: Nullable(Type.String()), now: Type.Number() }));
const StandbyRow = row(Type.Object({ lsn: Nullable(Type.String()), replayed_at: Nullable(Type.Number()) }));

const PROBE_INTERVAL_MS = 500;
/** Samples of the primary's position kept: over 15 minutes of a primary written to without a pause. */
const HISTORY_LIMIT = 2_000;

type ReplicaProbe = {
  states(): ReplicaState[];
  /** The primary's position at the last round that reached it. */
  primaryPosition(): Lsn | null;
  /** Takes a standby out of the reads (a read found it unreachable) until a round finds it again. */
  markDown(name: string, cause: unknown): void;
  /** Aborted when the standby is taken out: the reads waiting on it are run elsewhere at once. */
  outSignal(name: string): AbortSignal | undefined;
  stop(): void;
};

type Entry = { state: ReplicaState; known: boolean; out: AbortController };

export async function startReplicaProbe(options: {
  primary: DatabasePool;
  /** Each standby's probe pool (one connection, bounded like the query). */
  standbys: ReadonlyMap<string, DatabasePool>;
  timeoutMs: number;
  log: (line: string) => void;
}): Promise<ReplicaProbe> {
  const entries = new Map<string, Entry>();
  for (const name of options.standbys.keys()) {
    const state = { name, reachable: false, replayed: null, lagSeconds: null };
    entries.set(name, { state, known: false, out: new AbortController() });
  }
  const history: PrimarySample[] = [];
  let primaryClock: { epochSeconds: number; sentAt: number } | undefined;
  let stopped = false;

  const update = (name: string, state: ReplicaState, cause?: unknown) => {
    const entry = entries.get(name);
    if (!entry || stopped) return; // a round that ends after stop() found the pools closed
    const was = entry.known ? entry.state.reachable : undefined;
    entry.state = state;
    entry.known = true;
    if (was === state.reachable) return;
    if (state.reachable) {
      entry.out = new AbortController();
      options.log(`read replica ${name} is reachable`);
    } else {
      entry.out.abort(new DatabaseTimeoutError(`read replica ${name} was taken out of the reads`));
      options.log(`read replica ${name} is unreachable (${describe(cause)}): its reads go to the primary`);
    }
  };

  /** The primary was at `position` or before it when asked at `sentAt`. */
  const record = (position: Lsn, sentAt: number) => {
    const last = history.at(-1);
    if (last && position <= last.position) last.seenAt = sentAt;
    else history.push({ position, seenAt: sentAt });
    if (history.length > HISTORY_LIMIT) history.splice(0, history.length - HISTORY_LIMIT);
  };

  const probePrimary = async () => {
    const sentAt = performance.now();
    const found = await withinTime(
      options.primary.one(
        sql.type(PrimaryRow)`select pg_current_wal_insert_lsn()::text as lsn,
                                    extract(epoch from clock_timestamp())::float8 as now`,
      ),
      options.timeoutMs,
      'the primary',
    );
    const position = found.lsn ? parseLsn(found.lsn) : null;
    if (position !== null) record(position, sentAt);
    primaryClock = { epochSeconds: found.now, sentAt };
  };

  const probeStandby = async (name: string, pool: DatabasePool) => {
    try {
      const found = await withinTime(
        pool.one(
          sql.type(StandbyRow)`select pg_last_wal_replay_lsn()::text as lsn,
                                      extract(epoch from pg_last_xact_replay_timestamp())::float8 as replayed_at`,
        ),
        options.timeoutMs,
        `read replica ${name}`,
      );
      const at = performance.now();
      const replayed = found.lsn ? parseLsn(found.lsn) : null;
      if (replayed === null) throw new Error('it is not a standby in recovery');
      // Both times are the primary's clock: the commit's stamp, and its clock when last asked
      // plus the time since on ours.
      const sinceLastCommit =
        primaryClock && found.replayed_at !== null
          ? primaryClock.epochSeconds + (at - primaryClock.sentAt) / 1000 - found.replayed_at
          : null;
      const lagSeconds = replicaLagSeconds(replayed, history, at, sinceLastCommit);
      update(name, { name, reachable: true, replayed, lagSeconds });
    } catch (error) {
      update(name, { name, reachable: false, replayed: null, lagSeconds: null }, error);
    }
  };

  const round = async () => {
    // A primary that does not answer leaves its last position: the standbys are measured against it.
    await probePrimary().catch(() => {});
    await Promise.all([...options.standbys].map(([name, pool]) => probeStandby(name, pool)));
  };

  await round();
  let timer: NodeJS.Timeout | undefined;
  // The next round starts after this one ends (each is bounded by the timeouts above).
  const next = () => {
    if (stopped) return;
    timer = setTimeout(() => void round().finally(next), PROBE_INTERVAL_MS);
    timer.unref();
  };
  next();

  return {
    states: () => [...entries.values()].map((entry) => entry.state),
    primaryPosition: () => history.at(-1)?.position ?? null,
    markDown(name, cause) {
      const entry = entries.get(name);
      if (entry) update(name, { ...entry.state, reachable: false }, cause);
    },
    outSignal: (name) => entries.get(name)?.out.signal,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error && !error.message.includes(error.cause.message)
      ? `: ${error.cause.message}`
      : '';
  return `${error.message}${cause}`.slice(0, 200);
}

import { isDatabaseUnreachable } from './connection-failures.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Type } from 'typebox';
import {
  chooseReplica,
  type Lsn,
  type ReplicaCheck,
  replicaCheck,
} from '../../domain/read/replica-choice.ts';
import { parseLsn } from './wal-position.ts';
import { createDatabasePool, type DatabasePool, redactUrl, row, sql } from './database.ts';
import { startReplicaProbe } from './replica-probe.ts';

// Read replicas (docs/scaling.md, "Read replicas"): one set of read pools per hot standby named in
// DATABASE_READ_URLS, a probe (replica-probe.ts) that asks the primary and every standby where their
// WAL is twice a second, and a router that sends each read to a standby whose data is recent enough
// (and has replayed the caller's last write, carried in the request's read context), else to the
// primary. Every standby connection and query has a client-side time bound (bounded-driver.ts). A
// read that fails because its standby went away or stopped answering is run again on the primary,
// so a standby stopping, or hanging, costs no failed request.

type ReadContext = { mustHave: Lsn | null };

/** The request's read context; the HTTP adapter sets it per request (read-your-writes). */
export const readContext = new AsyncLocalStorage<ReadContext>();

/** A standby's pools: one for reads, one whose sessions use generic plans (see composition/read.ts). */
type ReplicaPools = { pool: DatabasePool; genericPlanPool: DatabasePool };

export type ReplicaSet = {
  /** The name of each standby (`replica-1`, ...) with the pools its reads use. */
  readonly pools: ReadonlyMap<string, ReplicaPools>;
  /** Where the next read of this request goes: a standby's name, or null for the primary. */
  choose(): string | null;
  /** A standby whose connection failed or timed out: no reads until a probe finds it again. */
  markDown(name: string, cause: unknown): void;
  /** Aborted when the standby is taken out of the reads (replica-probe.ts). */
  outSignal(name: string): AbortSignal | undefined;
  /** The primary's WAL position now (after a write: what the writer's next reads must see). */
  primaryPosition(): Promise<Lsn | null>;
  /** For /api/health. */
  status(): ReplicaCheck[];
  close(): Promise<void>;
};

const PositionRow = row(Type.Object({ lsn: Type.Union([Type.String(), Type.Null()]) }));

export async function openReplicaSet(options: {
  primary: DatabasePool;
  urls: readonly string[];
  maxLagSeconds: number;
  /** Connect and probe bound for a standby (REPLICA_TIMEOUT_MS). */
  timeoutMs: number;
  /** The standbys' read pools' statement_timeout. */
  statementTimeoutMs: number;
  /** The longest statement_timeout a read sets for itself (an export's pass over the data keys). */
  longestStatementMs: number;
  /** The standbys' read pools' parallel workers per statement (READ_PARALLEL_WORKERS). */
  parallelWorkers?: number;
  log: (line: string) => void;
}): Promise<ReplicaSet> {
  const pools = new Map<string, ReplicaPools>();
  const probePools = new Map<string, DatabasePool>();
  // A read is ended by the standby's statement_timeout; one that has not answered well after the
  // longest a read may set is on a standby that does not answer at all (stopped, or cut off by the
  // network). Reads waiting on a standby the probe finds down are run elsewhere long before that.
  const readBounds = {
    connectMs: options.timeoutMs,
    queryMs: Math.max(options.statementTimeoutMs, options.longestStatementMs) + options.timeoutMs,
  };
  for (const [index, url] of options.urls.entries()) {
    const name = `replica-${index + 1}`;
    const poolOptions = {
      statementTimeoutMs: options.statementTimeoutMs,
      timeBounds: readBounds,
      parallelWorkers: options.parallelWorkers,
    };
    pools.set(name, {
      pool: await createDatabasePool(url, { ...poolOptions, maximumPoolSize: 8 }),
      genericPlanPool: await createDatabasePool(url, {
        ...poolOptions,
        maximumPoolSize: 5,
        genericPlans: true,
      }),
    });
    // The probe's own connection: a standby whose read pools are busy still answers it at once.
    const probeBounds = { connectMs: options.timeoutMs, queryMs: options.timeoutMs };
    probePools.set(
      name,
      await createDatabasePool(url, {
        maximumPoolSize: 1,
        statementTimeoutMs: options.timeoutMs,
        timeBounds: probeBounds,
      }),
    );
    options.log(`read replica ${name}: ${redactUrl(url)}`);
  }
  const probe = await startReplicaProbe({
    primary: options.primary,
    standbys: probePools,
    timeoutMs: options.timeoutMs,
    log: options.log,
  });
  let turn = 0;

  // The primary's position is where its WAL is *inserted* up to, not where it is written: with
  // synchronous_commit off (a server configured so, the test clusters, or a transaction that turns
  // it off for itself like the rate-limit counters') a commit returns before its record is
  // written, so pg_current_wal_lsn() can lie before the caller's own commit, and a standby that had
  // replayed only that far would be chosen for a read that must see the write.
  const primaryPosition = async () => {
    const found = await options.primary.maybeOne(
      sql.type(PositionRow)`select pg_current_wal_insert_lsn()::text as lsn`,
    );
    return found?.lsn ? parseLsn(found.lsn) : null;
  };

  return {
    pools,
    choose: () =>
      chooseReplica(probe.states(), probe.primaryPosition(), {
        maxLagSeconds: options.maxLagSeconds,
        mustHave: readContext.getStore()?.mustHave ?? null,
        turn: (turn += 1),
      }),
    markDown: (name, cause) => probe.markDown(name, cause),
    outSignal: (name) => probe.outSignal(name),
    primaryPosition,
    status: () =>
      probe.states().map((state) => replicaCheck(state, probe.primaryPosition(), options.maxLagSeconds)),
    async close() {
      probe.stop();
      await Promise.all(
        [...pools.values()]
          .flatMap((set) => [set.pool, set.genericPlanPool])
          .concat([...probePools.values()])
          .map((pool) => pool.end()),
      );
    },
  };
}

/**
 * A reader (any object of async methods, e.g. the read model's EventReader) that sends each call to
 * the copy built on the chosen standby's pool, or on the primary's; a call that fails because the
 * standby's connection failed is made again on the primary.
 */
export function routedReader<Reader extends object>(
  replicas: ReplicaSet,
  primary: Reader,
  build: (pools: ReplicaPools) => Reader,
  onRead: (target: string) => void = () => {},
): Reader {
  const copies = new Map([...replicas.pools].map(([name, pool]) => [name, build(pool)]));
  return new Proxy(primary, {
    get(target, property) {
      const onPrimary: unknown = Reflect.get(target, property);
      if (typeof onPrimary !== 'function') return onPrimary;
      return (...args: unknown[]) => {
        const name = replicas.choose();
        const copy = name === null ? undefined : copies.get(name);
        if (!name || !copy) {
          onRead('primary');
          return (onPrimary as (...a: unknown[]) => unknown).apply(target, args);
        }
        onRead(name);
        const method = Reflect.get(copy, property) as (...a: unknown[]) => unknown;
        const result = method.apply(copy, args);
        if (!(result instanceof Promise)) return result;
        return unlessTakenOut(result, replicas.outSignal(name)).catch((error: unknown) => {
          if (!isDatabaseUnreachable(error)) throw error;
          replicas.markDown(name, error);
          onRead('primary');
          return (onPrimary as (...a: unknown[]) => unknown).apply(target, args);
        });
      };
    },
  });
}

/**
 * The read's answer, or the signal's reason (a DatabaseTimeoutError, which counts as unreachable)
 * as soon as its standby is taken out: a read waiting on a standby that stopped answering is run on
 * the primary when the probe finds out, not when its own time bound ends.
 */
function unlessTakenOut<T>(read: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return read;
  return new Promise<T>((resolve, reject) => {
    const takenOut = () => reject(signal.reason as Error);
    if (signal.aborted) takenOut();
    signal.addEventListener('abort', takenOut, { once: true });
    void read.then(resolve, reject).finally(() => signal.removeEventListener('abort', takenOut));
  });
}

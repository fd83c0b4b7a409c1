import { isDatabaseUnreachable } from './connection-failures.ts';
import { AsyncLocalStorage } from 'node:async_hooks';
import { Type } from 'typebox';
import {
  chooseReplica,
  type Lsn,
  type ReplicaCheck,
  replicaCheck,
  type ReplicaState,
} from '../../domain/read/replica-choice.ts';
import { parseLsn } from './wal-position.ts';
import { createDatabasePool, type DatabasePool, redactUrl, row, sql } from './database.ts';

// Read replicas (docs/scaling.md, "Read replicas"): one set of read pools per hot standby named in
// DATABASE_READ_URLS, a probe that asks the primary and every standby where their WAL is twice a
// second, and a router that sends each read to a standby that is caught up enough (and has replayed
// the caller's last write, carried in the request's read context), else to the primary. A read that
// fails because its standby went away is run again on the primary, so a standby stopping costs no
// failed request.

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
  /** A standby whose connection failed: no reads until a probe finds it again. */
  markDown(name: string): void;
  /** The primary's WAL position now (after a write: what the writer's next reads must see). */
  primaryPosition(): Promise<Lsn | null>;
  /** For /api/health. */
  status(): ReplicaCheck[];
  close(): Promise<void>;
};

const PositionRow = row(Type.Object({ lsn: Type.Union([Type.String(), Type.Null()]) }));
const PROBE_INTERVAL_MS = 500;

export async function openReplicaSet(options: {
  primary: DatabasePool;
  urls: readonly string[];
  maxLagBytes: number;
  statementTimeoutMs: number;
  log: (line: string) => void;
}): Promise<ReplicaSet> {
  const pools = new Map<string, ReplicaPools>();
  const states = new Map<string, ReplicaState>();
  for (const [index, url] of options.urls.entries()) {
    const name = `replica-${index + 1}`;
    const poolOptions = { statementTimeoutMs: options.statementTimeoutMs };
    pools.set(name, {
      pool: await createDatabasePool(url, { ...poolOptions, maximumPoolSize: 8 }),
      genericPlanPool: await createDatabasePool(url, {
        ...poolOptions,
        maximumPoolSize: 5,
        genericPlans: true,
      }),
    });
    states.set(name, { name, reachable: false, replayed: null });
    options.log(`read replica ${name}: ${redactUrl(url)}`);
  }
  let primaryLsn: Lsn | null = null;
  let turn = 0;

  // The primary's position is where its WAL is *inserted* up to, not where it is written: with
  // synchronous_commit off (the embedded cluster's setting) a commit returns before its record is
  // written, so pg_current_wal_lsn() can lie before the caller's own commit, and a standby that had
  // replayed only that far would be chosen for a read that must see the write.
  const position = async (pool: DatabasePool, text: 'primary' | 'standby') => {
    const query =
      text === 'primary'
        ? sql.type(PositionRow)`select pg_current_wal_insert_lsn()::text as lsn`
        : sql.type(PositionRow)`select pg_last_wal_replay_lsn()::text as lsn`;
    const found = await pool.maybeOne(query);
    return found?.lsn ? parseLsn(found.lsn) : null;
  };
  const probe = async () => {
    primaryLsn = await position(options.primary, 'primary').catch(() => primaryLsn);
    await Promise.all(
      [...pools].map(async ([name, { pool }]) => {
        const replayed = await position(pool, 'standby').catch(() => null);
        const before = states.get(name);
        states.set(name, { name, reachable: replayed !== null, replayed });
        if (before?.reachable !== (replayed !== null))
          options.log(`read replica ${name} is ${replayed !== null ? 'reachable' : 'unreachable'}`);
      }),
    );
  };
  await probe();
  let probing = false;
  const timer = setInterval(() => {
    if (probing) return;
    probing = true;
    void probe().finally(() => {
      probing = false;
    });
  }, PROBE_INTERVAL_MS);
  timer.unref();

  return {
    pools,
    choose: () =>
      chooseReplica([...states.values()], primaryLsn, {
        maxLagBytes: options.maxLagBytes,
        mustHave: readContext.getStore()?.mustHave ?? null,
        turn: (turn += 1),
      }),
    markDown(name) {
      const state = states.get(name);
      if (state?.reachable)
        options.log(`read replica ${name} failed a read: reads go elsewhere until it answers`);
      if (state) states.set(name, { ...state, reachable: false });
    },
    primaryPosition: () => position(options.primary, 'primary'),
    status: () => [...states.values()].map((state) => replicaCheck(state, primaryLsn, options.maxLagBytes)),
    async close() {
      clearInterval(timer);
      await Promise.all([...pools.values()].flatMap((set) => [set.pool.end(), set.genericPlanPool.end()]));
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
        return result.catch((error: unknown) => {
          if (!isDatabaseUnreachable(error)) throw error;
          replicas.markDown(name);
          onRead('primary');
          return (onPrimary as (...a: unknown[]) => unknown).apply(target, args);
        });
      };
    },
  });
}

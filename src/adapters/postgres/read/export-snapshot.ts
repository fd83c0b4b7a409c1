import { Type } from 'typebox';
import type { DatabaseTransactionConnection } from 'slonik';
import { type DatabasePool, row, sql } from '../database.ts';
import { sqlText, typed } from '../sql-text.ts';

// The one snapshot of an export (issue 30 §4; export.ts): a holder transaction that exports its
// snapshot and stays idle until the export ends, and the short transactions that import it.

const SnapshotRow = row(Type.Object({ snapshot: Type.String() }));
const SettingRow = row(Type.Object({ setting: Type.String() }));

/** What pg_export_snapshot returns (`00000003-0000001B-1`): checked before it is written into SQL text. */
const SNAPSHOT_ID = /^[0-9A-F]+(?:-[0-9A-F]+)+$/i;

export type Snapshot = {
  /** Runs `work` in a transaction of its own that sees the snapshot. */
  read<T>(work: (connection: DatabaseTransactionConnection) => Promise<T>): Promise<T>;
  /** Ends the holder's transaction; the snapshot can no longer be imported. */
  release(): Promise<void>;
};

const REPEATABLE_READ_ONLY = sql.unsafe`set transaction isolation level repeatable read, read only`;

/**
 * Opens the holder: a transaction on `pool` that exports its snapshot and stays open, idle, until
 * `release` (or until the database ends it after `maxMs`).
 */
export async function holdSnapshot(
  pool: DatabasePool,
  readPool: DatabasePool,
  maxMs: number,
): Promise<Snapshot> {
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let exported: (id: string) => void = () => {};
  let failed: (error: unknown) => void = () => {};
  const id = new Promise<string>((resolve, reject) => {
    exported = resolve;
    failed = reject;
  });
  const held = pool
    .transaction(async (transaction) => {
      await transaction.query(REPEATABLE_READ_ONLY);
      // The holder is idle for the whole export: its own idle bound, not the pool's.
      await transaction.query(
        typed(
          SettingRow,
        )`select set_config('idle_in_transaction_session_timeout', ${String(maxMs)}, true) as setting`,
      );
      const found = await transaction.one(typed(SnapshotRow)`select pg_export_snapshot() as snapshot`);
      exported(found.snapshot);
      await released;
    })
    // A holder the database ended (maxMs, a restart) fails the export's next read instead.
    .catch((error: unknown) => failed(error));
  const snapshot = await id;
  if (!SNAPSHOT_ID.test(snapshot)) {
    release();
    await held;
    throw new Error(`unexpected snapshot identifier ${JSON.stringify(snapshot)}`);
  }
  // Checked against SNAPSHOT_ID above: fixed text, never input.
  const text = `set transaction snapshot '${snapshot}'`;
  const importing = sqlText(Object.assign([text], { raw: [text] }) as TemplateStringsArray);
  return {
    read: (work) =>
      readPool.transaction(async (transaction) => {
        await transaction.query(REPEATABLE_READ_ONLY);
        await transaction.query(typed(SettingRow)`${importing}`);
        return work(transaction);
      }),
    async release() {
      release();
      await held;
    },
  };
}

/**
 * The export's batches, which end the snapshot when they end: read to the end, failed, or closed
 * early by `return` (also before the first `next`, which an async generator alone would not see).
 */
export function holding(batches: AsyncGenerator<string>, snapshot: Snapshot): AsyncIterable<string> {
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    await snapshot.release();
  };
  const iterator: AsyncIterableIterator<string> = {
    async next() {
      try {
        const next = await batches.next();
        if (next.done) await end();
        return next;
      } catch (error) {
        await end();
        throw error;
      }
    },
    async return() {
      try {
        await batches.return(undefined);
      } finally {
        await end();
      }
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

import { AsyncLocalStorage } from 'node:async_hooks';
import { Type } from 'typebox';
import type { RateWindow } from '../../../domain/accounts/quotas.ts';
import { windowStart } from '../../../domain/accounts/rate-limits.ts';
import type { RateLimitCounter } from '../../../ports/accounts/rate-limit-counter.ts';
import { type DatabasePool, row, sql } from '../database.ts';

/** Runs a function in the context of no request (captured at load, before any request exists). */
const outsideRequests = AsyncLocalStorage.snapshot();

const CountRow = Type.Object({
  key: Type.String(),
  window_name: Type.String(),
  window_start: Type.Number(),
  hits: Type.Number(),
});

type RateLimitCounterOptions = {
  /** Delete windows older than two days after this many flushes. */
  sweepEvery?: number;
  /** Local hits are written at the latest this long after the first of them (ms). */
  flushIntervalMs?: number;
  /**
   * Hits counted in memory between two writes, per window; also the margin below a limit from which every
   * hit is counted in the database at once (so limits of this size or smaller are always exact).
   */
  localHits?: number;
};

const sliceId = (key: string, windowName: string, start: number) => `${key}\u0000${windowName}\u0000${start}`;

/** One counter of one window slice, as this process knows it. */
type Slice = {
  key: string;
  window: RateWindow;
  start: number;
  /** The total in the database when this process last wrote or read it. */
  stored: number;
  /** When `stored` was read (ms); a local decision trusts it for one flush interval only. */
  storedAt: number;
  /** Hits taken here and not written yet, and hits being written now. */
  pending: number;
  writing: number;
  /** Hits being written one by one (near the limit). */
  syncing: number;
};

/**
 * Rate-limit counters shared by every API process through PostgreSQL, without a write per request.
 *
 * Far from a limit, a hit is counted in memory and allowed on (total last read from the database + hits
 * not yet written); the hits are written in one batched upsert for all keys every `flushIntervalMs`
 * (200 ms) or after `localHits` (50) hits of one window, whichever comes first, and the upsert returns
 * the new totals. Within `localHits` of a limit the hit is written at once and decided on the total the
 * database returns. When the last total read is older than one flush interval, or for a key not seen
 * yet, the hit waits for a batched write (shared with every other request waiting at that moment) and
 * is decided on the totals it returns. So one process is exact, limits of `localHits` or less are exact across processes, and with
 * several processes a key can get over its limit at most the hits the other processes hold unwritten
 * (each fewer than `localHits` per window) plus what they took in one flush interval: docs/api.md.
 */
export function postgresRateLimitCounter(
  pool: DatabasePool,
  options: RateLimitCounterOptions = {},
): RateLimitCounter {
  const sweepEvery = options.sweepEvery ?? 500;
  const interval = options.flushIntervalMs ?? 200;
  const localHits = options.localHits ?? 50;
  const slices = new Map<string, Slice>();
  let flushesSinceSweep = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  function sliceOf(key: string, window: RateWindow, now: Date): Slice {
    const start = windowStart(window, now).getTime();
    const id = sliceId(key, window.name, start);
    let slice = slices.get(id);
    if (!slice) {
      slice = { key, window, start, stored: 0, storedAt: -Infinity, pending: 0, writing: 0, syncing: 0 };
      slices.set(id, slice);
    }
    return slice;
  }

  /**
   * Adds `hits[i]` to the database counter of `batch[i]`, in one statement; returns the new totals.
   * Committed without waiting for the WAL flush (synchronous_commit off for this statement's own
   * transaction): a crash may forget the last few hundred milliseconds of hits, which a rate limit
   * can afford, and requests do not queue behind the disk while imports keep it busy.
   */
  function upsert(batch: Slice[], hits: number[]) {
    const text = (values: string[]) => sql.array(values, 'text');
    return pool.any(sql.type(row(CountRow))`
      insert into rate_limit_counters (key, window_name, window_start, hits)
      select key, name, start, hits
      from (select set_config('synchronous_commit', 'off', true)) as commit_setting, unnest(
        ${text(batch.map((s) => s.key))},
        ${text(batch.map((s) => s.window.name))},
        ${sql.array(
          batch.map((s) => new Date(s.start).toISOString()),
          'timestamptz',
        )},
        ${sql.array(hits, 'int4')}
      ) as w(key, name, start, hits)
      on conflict (key, window_name, window_start)
        do update set hits = rate_limit_counters.hits + excluded.hits
      returning key, window_name, (extract(epoch from window_start) * 1000)::float8 as window_start, hits`);
  }

  /** Writes every pending hit in one statement; the totals it returns refresh what this process knows. */
  async function write(): Promise<void> {
    const batch = [...slices.values()].filter((s) => s.pending > 0);
    if (batch.length === 0) return;
    for (const s of batch) {
      s.writing += s.pending;
      s.pending = 0;
    }
    const sent = batch.map((s) => s.writing);
    try {
      const rows = await upsert(batch, sent);
      const readAt = Date.now();
      // One batch holds every key seen in the interval (one per client address): look totals up by id.
      const totals = new Map(rows.map((r) => [sliceId(r.key, r.window_name, r.window_start), r.hits]));
      batch.forEach((s, i) => {
        s.writing -= sent[i] ?? 0;
        const stored = totals.get(sliceId(s.key, s.window.name, s.start));
        if (stored !== undefined) {
          s.stored = Math.max(s.stored, stored);
          s.storedAt = readAt;
        }
      });
    } catch (error) {
      // Not written: count them again with the next write.
      batch.forEach((s, i) => {
        s.writing -= sent[i] ?? 0;
        s.pending += sent[i] ?? 0;
      });
      throw error;
    }
    flushesSinceSweep += 1;
    if (flushesSinceSweep >= sweepEvery) {
      flushesSinceSweep = 0;
      await pool.query(sql.unsafe`
        delete from rate_limit_counters where window_start < now() - interval '2 days'`);
    }
  }

  /** Writes now, after any write under way, and forgets slices whose window has ended. */
  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const next = running.then(write);
    running = next.catch(() => undefined);
    return next.finally(() => {
      const now = Date.now();
      for (const [id, s] of slices) {
        if (s.pending === 0 && s.writing === 0 && s.syncing === 0 && s.start + s.window.seconds * 1000 <= now)
          slices.delete(id);
      }
    });
  }

  function schedule(): void {
    if (timer) return;
    // The batch is everybody's, not the request's that happened to schedule it: write it outside
    // that request's scope, so its client disconnecting cannot cancel the write (query-cancellation.ts).
    timer = setTimeout(
      () =>
        outsideRequests(() => {
          timer = undefined;
          flush().catch((error: unknown) => {
            process.stderr.write(`rate-limit counters: ${String(error)}\n`);
          });
        }),
      interval,
    );
    timer.unref();
  }

  /** The old way, near a limit: this hit alone, decided on the total the database returns. */
  async function writeOne(mine: Slice[], amount: number): Promise<number[]> {
    for (const s of mine) s.syncing += amount;
    try {
      const rows = await upsert(
        mine,
        mine.map(() => amount),
      );
      const readAt = Date.now();
      return mine.map((s) => {
        const hits = rows.find((r) => r.window_name === s.window.name)?.hits ?? 0;
        s.stored = Math.max(s.stored, hits);
        s.storedAt = readAt;
        // Hits of this process not written yet are real too (those being written may be counted twice).
        return hits + s.pending + s.writing;
      });
    } finally {
      for (const s of mine) s.syncing -= amount;
    }
  }

  /**
   * The batched write, shared by every caller that asks while none is queued: requests that find
   * their totals stale at the same time (all of them, when pages take longer than a flush interval)
   * wait for one upsert instead of queueing one each on the same counter row.
   */
  let refreshing: Promise<void> | null = null;
  function refresh(): Promise<void> {
    refreshing ??= flush().finally(() => {
      refreshing = null;
    });
    return refreshing;
  }

  const known = (s: Slice) => s.stored + s.writing + s.pending + s.syncing;
  const stale = (s: Slice) => Date.now() - s.storedAt >= interval;

  return {
    async hit(key, windows, now, amount = 1) {
      if (windows.length === 0) return [];
      const mine = windows.map((window) => sliceOf(key, window, now));
      if (mine.some((s) => known(s) + amount + localHits > s.window.limit)) {
        const hits = await writeOne(mine, amount);
        return mine.map((s, i) => ({ window: s.window, hits: hits[i] ?? 0 }));
      }
      if (mine.some(stale)) {
        // Far from the limit but the totals are old (or unknown): count the hit here and decide on
        // the totals a write returns. A write under way when the hit came may not carry it: then
        // the next one does.
        for (const s of mine) s.pending += amount;
        for (let round = 0; round < 2 && mine.some(stale); round += 1) await refresh();
        if (mine.some((s) => s.pending > 0)) schedule();
        return mine.map((s) => ({ window: s.window, hits: known(s) }));
      }
      for (const s of mine) s.pending += amount;
      const counts = mine.map((s) => ({ window: s.window, hits: known(s) }));
      if (mine.some((s) => s.pending >= localHits)) await flush();
      else schedule();
      return counts;
    },
    flush,
  };
}

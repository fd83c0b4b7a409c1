import t from 'tap';
import { sql, type DatabasePool } from '../../../src/adapters/postgres/database.ts';
import { postgresChangeFeed } from '../../../src/adapters/postgres/read/changes.ts';
import { type ChangePosition, encodeChangeCursor } from '../../../src/domain/read/change-cursor.ts';
import { parseEventFilter } from '../../../src/domain/read/read-query.ts';
import type { Change, ChangeFeed } from '../../../src/ports/read/change-feed.ts';
import { changesVisible } from '../../helpers/change-log.ts';
import { testDatabase } from '../../helpers/database.ts';

// The change feed's visibility fence (src/adapters/postgres/read/changes.ts): a transaction that
// started writing first and commits last is never passed over, and readers resuming from every
// cursor while imports run concurrently see each change exactly once.

const ADMIN = { id: 1, email: 'admin@example.org', role: 'admin', trustLevel: 5 } as const;
const ALL = parseEventFilter({});

/**
 * Datasets of their own per writer, their counts pending (migration 0330): the count and data
 * version rows each dataset's writers update would otherwise make one writer wait for the other.
 */
async function seedDatasets(pool: DatabasePool, count: number): Promise<number[]> {
  const ids = await pool.anyFirst(sql.unsafe`
    with c as (insert into catalogs (slug, title, is_public) values ('feed', 'Feed', true) returning id)
    insert into datasets (catalog_id, slug, title, is_public, counts_pending)
    select id, 'feed-' || n, 'Feed ' || n, true, true from c cross join generate_series(1, ${count}::int) n
    returning id`);
  return (ids as number[]).toSorted((a, b) => a - b);
}

function insertEvents(dataset: number, prefix: string, count: number) {
  return sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, event_timestamp)
    select d.id, d.catalog_id, ${prefix} || '-' || n, ${prefix}, timestamptz '2020-01-01' + n * interval '1 hour'
    from datasets d cross join generate_series(1, ${count}::int) n where d.id = ${dataset}`;
}

/** Every change after `from`, read in pages of `limit`; with the cursor after each page. */
async function readAll(feed: ChangeFeed, from: ChangePosition | null, limit: number) {
  const changes: Change[] = [];
  let after = from;
  for (;;) {
    const page = await feed.readChanges(ADMIN, ALL, after, limit);
    changes.push(...page.changes);
    after = page.next;
    if (!page.hasMore) return { changes, next: page.next };
  }
}

const key = (change: Change) => encodeChangeCursor(change.position);

t.test('a transaction holding a lower id open holds the feed back; none is skipped', async (t) => {
  const db = await testDatabase(t);
  const [lowDataset, highDataset] = (await seedDatasets(db.pool, 2)) as [number, number];
  const feed = postgresChangeFeed(db.pool);
  const start = await readAll(feed, null, 100);
  t.equal(start.changes.length, 0, 'nothing yet');

  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let written!: () => void;
  const wroteLow = new Promise<void>((resolve) => (written = resolve));
  // The low transaction writes first (it takes the lower transaction id and the lower seq) and
  // stays open until released.
  const low = db.pool.transaction(async (tx) => {
    await tx.query(insertEvents(lowDataset, 'low', 2));
    written();
    await held;
  });
  await wroteLow;
  await db.pool.query(insertEvents(highDataset, 'high', 3));
  const committed = await db.pool.oneFirst(sql.unsafe`select count(*)::int from event_changes`);
  t.equal(committed, 3, 'the later transaction committed its three changes (the held one is not visible)');

  const whileHeld = await readAll(feed, start.next, 100);
  t.same(whileHeld.changes, [], 'the feed does not pass the open transaction');
  t.same(whileHeld.next, start.next, 'and its cursor does not move past it');

  release();
  await low;
  // Transaction ids are the cluster's: another test file's open transaction may hold the fence a
  // moment longer than this file's own.
  await changesVisible(db.pool);
  const after = await readAll(feed, whileHeld.next, 100);
  t.same(
    after.changes.map((c) => c.kind),
    ['created', 'created', 'created', 'created', 'created'],
    'all five changes once the held transaction ended',
  );
  const titles = after.changes.map((c) => (JSON.parse(c.eventJson as string) as { title: string }).title);
  t.same(titles, ['low', 'low', 'high', 'high', 'high'], 'in the order of the transactions that stored them');
  const again = await readAll(feed, after.next, 100);
  t.same(again.changes, [], 'nothing repeats after the last cursor');
});

t.test('concurrent imports and readers resuming from every cursor: each change exactly once', async (t) => {
  const db = await testDatabase(t);
  const writers = 3;
  const datasets = await seedDatasets(db.pool, writers);
  const feed = postgresChangeFeed(db.pool);
  const rounds = 8;
  let writing = true;
  const seen: Change[] = [];
  const cursors: Array<{ cursor: ChangePosition; count: number }> = [];
  let position: ChangePosition | null = null;
  const reader = (async () => {
    for (;;) {
      const done = !writing;
      const page = await feed.readChanges(ADMIN, ALL, position, 4);
      seen.push(...page.changes);
      position = page.next;
      cursors.push({ cursor: page.next, count: seen.length });
      if (done && !page.hasMore) return;
    }
  })();
  await Promise.all(
    Array.from({ length: writers }, (_, writer) =>
      (async () => {
        for (let round = 0; round < rounds; round += 1) {
          await db.pool.transaction(async (tx) => {
            await tx.query(insertEvents(datasets[writer] as number, `w${writer}r${round}`, 3));
            await tx.query(sql.unsafe`update events set title = title || '!' where title = ${`w${writer}r${round}`}
                                      and unique_id like '%-1'`);
            if (round > 0)
              await tx.query(
                sql.unsafe`delete from events where title = ${`w${writer}r${round - 1}`} and unique_id like '%-2'`,
              );
          });
        }
      })(),
    ),
  );
  // The reader's last pass must come after every write is below the fence, which another test file's
  // open transaction (transaction ids are the cluster's) may hold back a moment after the writers end.
  await changesVisible(db.pool);
  writing = false;
  await reader;

  const stored = await db.pool.anyFirst(
    sql.unsafe`select c.seq::text from event_changes c order by c.txid, c.seq`,
  );
  t.equal(stored.length, writers * rounds * 4 + writers * (rounds - 1), 'every write was logged');
  t.same(
    seen.map((c) => c.position.seq.toString()),
    stored,
    'the polling reader saw every change exactly once, in stored order',
  );
  t.same(
    Object.fromEntries(
      ['created', 'updated', 'deleted'].map((k) => [k, seen.filter((c) => c.kind === k).length]),
    ),
    { created: writers * rounds * 3, updated: writers * rounds, deleted: writers * (rounds - 1) },
    'creations, updates and deletions',
  );
  t.ok(
    seen.filter((c) => c.kind === 'deleted').every((c) => c.eventJson === null),
    'a deletion carries its id only',
  );
  const deleted = new Set(seen.filter((c) => c.kind === 'deleted').map((c) => c.eventId));
  t.ok(
    seen.every((c) => c.kind === 'deleted' || c.eventJson !== null || deleted.has(c.eventId)),
    'a creation shows its event unless it was deleted before it was read',
  );
  // A reader resuming from any cursor it was given gets exactly the changes after it.
  const all = seen.map(key);
  for (const { cursor, count } of cursors) {
    const rest = await readAll(feed, cursor, 50);
    if (rest.changes.map(key).join() !== all.slice(count).join()) {
      t.fail(`resuming from ${encodeChangeCursor(cursor)} differs`);
      return;
    }
  }
  t.pass(`resuming from each of ${cursors.length} cursors gave exactly the changes after it`);
});

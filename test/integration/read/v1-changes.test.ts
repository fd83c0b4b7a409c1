import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { accountsApp, insertAccessFixture, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { changesVisible } from '../../helpers/change-log.ts';

// GET /api/v1/changes over HTTP: the one access rule, the read API's filters, updates and
// deletions, hostile cursors (400) and a cursor past the retention (410), in the spec's bodies.

type ChangeBody = { cursor: string; kind: string; eventId: number; event?: { title: string } };
type Page = { changes: ChangeBody[]; nextCursor: string; hasMore: boolean };

t.test('/api/v1/changes', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t, { policy: unlimitedAnonymousReads });
  const owner = await createUser({ trustLevel: 3 });
  const admin = await createUser({ role: 'admin', trustLevel: 5 });
  await insertAccessFixture(db, owner.id);
  // The feed shows what is below the cluster-wide fence: wait (bounded) for these writes to pass it.
  await changesVisible(db.pool);
  const tokens = { anonymous: null, owner: await login(owner), admin: await login(admin) };
  const read = async (token: string | null, query: string): Promise<Page> => {
    const response = await as(token)('GET', `/api/v1/changes?${query}`);
    t.equal(response.statusCode, 200, `GET /api/v1/changes?${query}`);
    return response.json() as Page;
  };

  const expected = { anonymous: 5, owner: 10, admin: 15 };
  const cursors: Record<string, string> = {};
  for (const [who, token] of Object.entries(tokens)) {
    const page = await read(token, 'limit=1000');
    t.equal(page.changes.length, expected[who as keyof typeof expected], `${who}: the creations it may read`);
    t.ok(
      page.changes.every((c) => c.kind === 'created' && c.event),
      `${who}: creations with their event`,
    );
    t.equal(page.hasMore, false);
    cursors[who] = page.nextCursor;
  }
  const firstTwo = await read(tokens.admin, 'limit=2');
  t.equal(firstTwo.hasMore, true, 'a full page says there is more');
  const rest = await read(tokens.admin, `limit=1000&cursor=${firstTwo.nextCursor}`);
  t.equal(rest.changes.length, 13, 'resuming gives the others');
  const mine = await read(tokens.owner, 'catalog=mine');
  t.equal(mine.changes.length, 5, 'the catalog filter');
  const box = encodeURIComponent(JSON.stringify({ north: 53, south: 52, east: 13.4025, west: 13 }));
  const boxed = await read(tokens.anonymous, `bounds=${box}`);
  t.equal(boxed.changes.length, 2, 'the box filter');

  // An update that changes nothing is no change; one that does, a deletion, and a back-dated event.
  await db.pool.query(sql.unsafe`update events set title = title where unique_id = 'open-data-1'`);
  await db.pool.query(sql.unsafe`update events set title = 'renamed' where unique_id = 'open-data-1'`);
  await db.pool.query(sql.unsafe`delete from events where unique_id = 'open-data-2'`);
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, event_timestamp)
    select id, catalog_id, 'old', 'back-dated', '1850-01-01' from datasets where slug = 'open-data'`);
  await db.pool.query(sql.unsafe`update events set title = 'hidden change' where unique_id = 'my-data-1'`);
  await changesVisible(db.pool);
  const later = await read(tokens.anonymous, `cursor=${cursors.anonymous}`);
  t.same(
    later.changes.map((c) => [c.kind, c.event?.title ?? null]),
    [
      ['updated', 'renamed'],
      ['deleted', null],
      ['created', 'back-dated'],
    ],
    'the anonymous reader sees the public changes in stored order, a back-dated event too, not the private one',
  );
  t.notOk('event' in (later.changes[1] as object), 'a deletion carries the id only');
  const ownerLater = await read(tokens.owner, `cursor=${cursors.owner}`);
  t.equal(ownerLater.changes.at(-1)?.event?.title, 'hidden change', 'the owner sees the private change');

  for (const cursor of ['x', 'YzEuMS4x!', Buffer.from('c1.-1.2').toString('base64url'), 'a'.repeat(300)]) {
    const response = await as(null)('GET', `/api/v1/changes?cursor=${encodeURIComponent(cursor)}`);
    t.equal(response.statusCode, 400, `cursor ${cursor.slice(0, 20)}: 400`);
    t.match(response.json(), { error: 'Bad Request', code: 'INVALID_PARAMETER' });
  }

  // Pruned: a cursor before the horizon is 410, a reader without a cursor starts after it.
  await db.pool.query(sql.unsafe`select chronomap_prune_event_changes('0 seconds')`);
  const gone = await as(null)('GET', `/api/v1/changes?cursor=${cursors.anonymous}`);
  t.equal(gone.statusCode, 410, 'a pruned cursor is 410');
  t.match(gone.json(), { error: 'Gone', code: 'CURSOR_EXPIRED' });
  t.same((await read(tokens.admin, '')).changes, [], 'nothing left after the prune');
});

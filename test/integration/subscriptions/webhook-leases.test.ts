import t, { type Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  matchStoredChanges,
  sendDueDeliveries,
} from '../../../src/application/subscriptions/deliver-subscriptions.ts';
import { DELIVERY_BATCH_SIZE } from '../../../src/domain/subscriptions/subscriptions.ts';
import { changesVisible } from '../../helpers/change-log.ts';
import { deliveryDeps, subscribedReceiver } from '../../helpers/webhook-receiver.ts';

// A claim's lease bounds what it does (issue 39, at least once without needless duplicates): a send
// starts only while the lease outlasts it, so behind a slow receiver a subscription's later
// deliveries are released unsent, in order, for the next claim; and a claim whose lease ended and
// whose deliveries another worker claimed again records nothing over that claim. Time is a clock
// the test moves, and a lease taken over is written in the database: nothing here waits.

const LEASE_MS = 60_000;
const SEND_TIMEOUT_MS = 5_000;

async function setup(t: Test, deliveries: number) {
  // Enough events for `deliveries` deliveries of the one subscription, matched in one batch.
  const { db, receiver, store } = await subscribedReceiver(t, {
    name: 'leases',
    events: deliveries * DELIVERY_BATCH_SIZE,
  });
  await changesVisible(db.pool);
  const statuses = () =>
    db.pool.anyFirst(sql.type(row(Type.Object({ s: Type.String() })))`
      select status || case when leased_until is null then '' else ' (leased)' end as s
      from subscription_deliveries order by created_at, (changes->0->>0)::numeric, (changes->0->>1)::numeric`);
  return { db, receiver, store, statuses };
}

t.test('a send starts only while the lease outlasts it; the rest is released, in order', async (t) => {
  const { db, receiver, statuses } = await setup(t, 3);
  // A slow receiver: its first answer takes the claim past the last moment a send may start.
  const start = Date.now();
  const now = () => (receiver.received.length === 0 ? start : start + LEASE_MS - SEND_TIMEOUT_MS + 1);
  const slow = deliveryDeps(db.pool, { leaseMs: LEASE_MS, sendTimeoutMs: SEND_TIMEOUT_MS, now });
  await matchStoredChanges(slow);
  t.equal(await sendDueDeliveries(slow, 100), 3, 'three deliveries claimed');
  t.equal(receiver.received.length, 1, 'one sent');
  t.same(await statuses(), ['delivered', 'pending', 'pending'], 'the others released unsent, due again');
  const attempts = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
    select count(*)::int as n from subscription_attempts`);
  t.equal(attempts, 1, 'no attempt logged for what was not sent');

  // The next claim sends them, in the order they were queued.
  t.equal(await sendDueDeliveries(deliveryDeps(db.pool), 100), 2);
  t.same(await statuses(), ['delivered', 'delivered', 'delivered']);
  // One insert stored the events, so the feed's order is their ids' order.
  const firstEvents = receiver.received.map((r) => Number(r.body.changes[0]!.eventId));
  t.same(
    firstEvents,
    [...firstEvents].sort((a, b) => a - b),
    'in queue order',
  );
});

t.test('a claim whose deliveries were claimed again records nothing over the newer claim', async (t) => {
  const { db, store, statuses } = await setup(t, 1);
  await matchStoredChanges(deliveryDeps(db.pool));
  const [stale] = await store.claimDue(10, LEASE_MS);
  t.ok(stale, 'claimed');
  // Its lease ended, and another worker claimed the delivery again.
  await db.pool.query(sql.unsafe`update subscription_deliveries set leased_until = null`);
  const [newer] = await store.claimDue(10, LEASE_MS);
  t.equal(newer?.id, stale!.id, 'the same delivery');
  const failure = { statusCode: 500, durationMs: 1, error: 'the receiver answered 500' };
  const lost = await store.recordAttempts(
    [{ delivery: stale!, outcome: failure, next: { kind: 'retry', at: new Date(Date.now() + LEASE_MS) } }],
    5,
  );
  t.equal(lost, 1, 'the stale claim’s attempt is not recorded');
  t.same(await statuses(), ['pending (leased)'], 'still the newer claim’s');
  const counts = await db.pool.one(sql.type(
    row(Type.Object({ attempts: Type.Number(), failures: Type.Number() })),
  )`
    select (select count(*)::int from subscription_attempts) as attempts,
           (select consecutive_failures from subscriptions) as failures`);
  t.same(counts, { attempts: 0, failures: 0 }, 'nothing logged or counted');

  const ok = { statusCode: 200, durationMs: 1, error: null };
  t.equal(await store.recordAttempts([{ delivery: newer!, outcome: ok, next: { kind: 'delivered' } }], 5), 0);
  t.same(await statuses(), ['delivered'], 'the newer claim records its own');
});

t.test('attempts a claim could not record are logged by the worker', async (t) => {
  const { db, receiver, store, statuses } = await setup(t, 1);
  const lines: string[] = [];
  const deps = deliveryDeps(db.pool, {
    leaseMs: LEASE_MS,
    sendTimeoutMs: SEND_TIMEOUT_MS,
    log: (line) => lines.push(line),
  });
  await matchStoredChanges(deps);
  receiver.hold();
  const sending = sendDueDeliveries(deps, 10);
  // While the send waits for its answer, the claim's lease is taken over by another worker's claim.
  for (let tries = 0; receiver.waiting() === 0; tries += 1) {
    if (tries > 600) throw new Error('the delivery never reached the receiver');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await db.pool.query(sql.unsafe`update subscription_deliveries set leased_until = null`);
  t.equal((await store.claimDue(10, LEASE_MS)).length, 1, 'claimed again');
  receiver.release();
  t.equal(await sending, 1, 'the first claim sent its delivery');
  t.same(await statuses(), ['pending (leased)'], 'its attempt is not recorded over the newer claim');
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /1 of 1 attempts not recorded/);
});

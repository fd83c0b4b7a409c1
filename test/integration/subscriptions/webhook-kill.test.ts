import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { stopProcess } from '../../helpers/processes.ts';
import { subscribedReceiver } from '../../helpers/webhook-receiver.ts';

// At least once across kill -9 (issue 39 §2): a worker process is SIGKILLed while its webhook POST
// is in flight (the receiver holds it unanswered); a second worker sends that delivery again when
// its lease ends. Every change arrives, and every duplicate carries the webhook-id (and the
// changes) of the first.

const EVENTS = 150;

t.test('kill -9 of the worker mid-delivery loses nothing', async (t) => {
  const { db, receiver } = await subscribedReceiver(t, { name: 'killed', events: EVENTS });

  const worker = () => {
    const child = spawn(
      process.execPath,
      [path.join(import.meta.dirname, '../../helpers/subscription-worker.ts')],
      {
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          LEASE_MS: '1500',
          NODE_OPTIONS: '--disable-warning=ExperimentalWarning',
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    t.teardown(() => stopProcess(child, 'SIGKILL'));
    return child;
  };
  const until = async (what: string, done: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 1200; i += 1) {
      if (await done()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`gave up waiting: ${what}`);
  };

  receiver.hold();
  const first = worker();
  await until('a delivery in flight', () => receiver.waiting() > 0);
  await stopProcess(first, 'SIGKILL');
  receiver.release(); // answered to a dead connection: the first worker never learns it arrived
  const heldIds = receiver.received.map((r) => r.id);
  t.ok(heldIds.length > 0, 'the killed worker had sent a delivery');

  worker();
  const pending = () =>
    db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int as n from subscription_deliveries where status <> 'delivered'`);
  await until('every delivery delivered', async () => (await pending()) === 0);

  const events = new Set(receiver.received.flatMap((r) => r.body.changes.map((c) => c.eventId)));
  t.equal(events.size, EVENTS, 'every change arrived');
  t.ok(
    receiver.received.every((r) => r.verified),
    'every request signed',
  );
  const byId = new Map<string, string>();
  let duplicates = 0;
  for (const r of receiver.received) {
    const changes = JSON.stringify(r.body.changes.map((c) => c.cursor));
    if (byId.has(r.id)) {
      duplicates += 1;
      t.equal(changes, byId.get(r.id), `the duplicate of ${r.id} carries the same changes`);
    } else byId.set(r.id, changes);
  }
  t.ok(duplicates >= 1, 'the delivery in flight at the kill was sent again');
  t.ok(
    heldIds.every((id) => byId.has(id)),
    'under the same webhook-id',
  );
  const deliveries = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
    select count(*)::int as n from subscription_deliveries`);
  t.equal(byId.size, deliveries, 'one webhook-id per delivery');
});

import { createDatabasePool } from '../../src/adapters/postgres/database.ts';
import {
  matchStoredChanges,
  sendDueDeliveries,
} from '../../src/application/subscriptions/deliver-subscriptions.ts';
import { deliveryDeps } from './webhook-receiver.ts';

// A subscriptions worker as a process of its own, for the kill -9 test (webhook-kill.test.ts): the
// worker's round (match, then send what is due) in a loop on DATABASE_URL, with a short lease
// (LEASE_MS) so that a delivery claimed by a killed worker is due again soon.

const pool = await createDatabasePool(process.env.DATABASE_URL ?? '', { maximumPoolSize: 3 });
// A send is bounded under the lease (a claim starts a send only while its lease outlasts it).
const leaseMs = Number(process.env.LEASE_MS ?? 1000);
const deps = deliveryDeps(pool, { leaseMs, sendTimeoutMs: Math.floor(leaseMs / 2) });
process.stdout.write('ready\n');
for (;;) {
  await matchStoredChanges(deps);
  await sendDueDeliveries(deps, 100);
  await new Promise((resolve) => setTimeout(resolve, 50));
}

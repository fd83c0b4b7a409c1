import type { PgBoss } from 'pg-boss';
import {
  type DeliveryDeps,
  matchStoredChanges,
  sendDueDeliveries,
} from '../../application/subscriptions/deliver-subscriptions.ts';

// The `subscription-round` queue (issue 39 §2): one round matches what was stored since the last
// one and sends the due deliveries, then queues the next round a second later, so deliveries leave
// within seconds of a commit. `stately`: one round running and one queued at most, however many
// worker processes there are. The chain is started by each worker and restarted every minute by
// the schedule manager (a round lost with a killed worker fails on its heartbeat). What a round
// does is safe to repeat: the cursor row is locked while a batch is matched, claimed deliveries are
// leased, and a delivery whose worker died is sent again, under its id, when its lease ends.

const SUBSCRIPTION_ROUND_QUEUE = 'subscription-round';
const ROUND_GAP_SECONDS = 1;
const SENDS_PER_CLAIM = 100;
const CLAIMS_PER_ROUND = 20;

export const SUBSCRIPTION_QUEUES = [
  {
    name: SUBSCRIPTION_ROUND_QUEUE,
    options: { policy: 'stately' as const, retryLimit: 0, heartbeatSeconds: 10, expireInSeconds: 300 },
  },
];

async function round(deps: DeliveryDeps): Promise<void> {
  await matchStoredChanges(deps);
  for (let i = 0; i < CLAIMS_PER_ROUND; i += 1)
    if ((await sendDueDeliveries(deps, SENDS_PER_CLAIM)) < SENDS_PER_CLAIM) return;
}

/** Queues a round unless one is queued already (the schedule manager calls this every minute). */
export async function queueSubscriptionRound(boss: PgBoss, startAfterSeconds = 0): Promise<void> {
  await boss.send(
    SUBSCRIPTION_ROUND_QUEUE,
    {},
    startAfterSeconds > 0 ? { startAfter: startAfterSeconds } : {},
  );
}

export async function startSubscriptionWorker(boss: PgBoss, deps: DeliveryDeps): Promise<void> {
  await boss.work(
    SUBSCRIPTION_ROUND_QUEUE,
    { pollingIntervalSeconds: 0.5, localConcurrency: 1 },
    async () => {
      try {
        await round(deps);
      } finally {
        await queueSubscriptionRound(boss, ROUND_GAP_SECONDS);
      }
    },
  );
  await queueSubscriptionRound(boss);
}

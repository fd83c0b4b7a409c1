import {
  DELIVERY_BATCH_SIZE,
  DELIVERY_MAX_ATTEMPTS,
  FAILURES_BEFORE_DISABLE,
  retryDelayMs,
} from '../../domain/subscriptions/subscriptions.ts';
import type { Change, ChangeFeed } from '../../ports/read/change-feed.ts';
import type { DigestEvent, DigestSender } from '../../ports/subscriptions/digest-sender.ts';
import type { DueDelivery, SubscriptionStore } from '../../ports/subscriptions/subscription-store.ts';
import type { SendOutcome, WebhookSender } from '../../ports/subscriptions/webhook-sender.ts';
import { changeItemJson } from '../read/list-changes.ts';

// The subscriptions' worker step (issue 39 §2, §5): match what was stored since the last step
// against every subscription (once per batch, in the store's SQL), then send the due deliveries.
// A delivery's changes are read when it is sent through the change feed's own access rule and
// location privacy for the owner (ChangeFeed.readChangesAt): what the owner may no longer read is
// left out, and a delivery left with nothing is dropped, so deliveries stop when access is lost.

export type DeliveryDeps = {
  subscriptions: SubscriptionStore;
  changes: ChangeFeed;
  webhooks: WebhookSender;
  /** The e-mail channel (another feature's); null where e-mail is not configured. */
  digests: DigestSender | null;
  random: () => number;
  now: () => number;
  /** The site's address, for the links of an e-mail digest. */
  publicBaseUrl: string;
  /** The first retry's wait (5 s; tests make it short). */
  retryBaseMs: number;
  /** How long a claimed delivery is another worker's to leave alone (a killed worker's comes back after it). */
  leaseMs: number;
};

const MATCH_BATCH = 5_000;
const DIGEST_EVENTS = 20;

/** Matches everything stored since the last call (batch after batch): the changes read. */
export async function matchStoredChanges(deps: DeliveryDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const read = await deps.subscriptions.matchNextBatch(MATCH_BATCH, DELIVERY_BATCH_SIZE);
    total += read;
    if (read < MATCH_BATCH) return total;
  }
}

function digestEvent(change: Change, base: string): DigestEvent | null {
  if (change.eventJson === null) return null;
  const event = JSON.parse(change.eventJson) as {
    id: number;
    title: string | null;
    eventTimestamp: string | null;
    dataset: { title: string };
  };
  return {
    id: String(event.id),
    title: event.title,
    timestamp: event.eventTimestamp,
    datasetTitle: event.dataset.title,
    url: `${base}/api/v1/events/${event.id}`,
  };
}

async function attempt(deps: DeliveryDeps, delivery: DueDelivery, changes: Change[]): Promise<SendOutcome> {
  const { subscription } = delivery;
  if (subscription.channel.kind === 'email') {
    const started = deps.now();
    if (!deps.digests || delivery.owner === null)
      return { statusCode: null, durationMs: 0, error: 'e-mail delivery is not configured on this site' };
    const events = changes.flatMap((c) => digestEvent(c, deps.publicBaseUrl) ?? []);
    const answer = await deps.digests.sendEventDigest({
      ownerId: subscription.ownerId,
      emailAddressId: subscription.channel.emailAddressId,
      subscriptionId: subscription.id,
      subscriptionName: subscription.name,
      events: events.slice(0, DIGEST_EVENTS),
      moreCount: Math.max(0, events.length - DIGEST_EVENTS),
      manageUrl: `${deps.publicBaseUrl}/account/subscriptions`,
    });
    const durationMs = Math.round(deps.now() - started);
    return answer === 'queued'
      ? { statusCode: null, durationMs, error: null }
      : { statusCode: null, durationMs, error: 'the e-mail address is not confirmed' };
  }
  const body =
    `{"type":"${delivery.kind === 'test' ? 'test' : 'changes'}","deliveryId":${JSON.stringify(delivery.id)},` +
    `"subscription":{"id":${subscription.id},"name":${JSON.stringify(subscription.name)}},` +
    `"changes":[${changes.map(changeItemJson).join(',')}]}`;
  return deps.webhooks.send({
    url: subscription.channel.url,
    secret: subscription.secret ?? '',
    id: delivery.id,
    body,
  });
}

/** Sends one claimed delivery and records the attempt. */
async function deliver(deps: DeliveryDeps, delivery: DueDelivery): Promise<void> {
  const record = deps.subscriptions.recordAttempt;
  const dropped = { statusCode: null, durationMs: 0, error: null };
  // The key it was made with was revoked: the owner's access through it is gone.
  if (delivery.owner === null) return record(delivery, dropped, { kind: 'dropped' }, FAILURES_BEFORE_DISABLE);
  const changes =
    delivery.kind === 'test'
      ? []
      : await deps.changes.readChangesAt(delivery.owner, delivery.subscription.filter, delivery.changes);
  if (delivery.kind === 'changes' && changes.length === 0)
    return record(delivery, dropped, { kind: 'dropped' }, FAILURES_BEFORE_DISABLE);
  const outcome = await attempt(deps, delivery, changes);
  const tries = delivery.attempts + 1;
  const next =
    outcome.error === null
      ? ({ kind: 'delivered' } as const)
      : delivery.kind === 'test' || tries >= DELIVERY_MAX_ATTEMPTS
        ? ({ kind: 'failed' } as const)
        : ({
            kind: 'retry',
            at: new Date(deps.now() + retryDelayMs(tries, deps.random(), deps.retryBaseMs)),
          } as const);
  await record(delivery, outcome, next, FAILURES_BEFORE_DISABLE);
}

/** Sends up to `limit` due deliveries, a few at a time: how many were claimed. */
export async function sendDueDeliveries(deps: DeliveryDeps, limit: number): Promise<number> {
  const due = await deps.subscriptions.claimDue(limit, deps.leaseMs);
  const parallel = 8;
  for (let i = 0; i < due.length; i += parallel)
    await Promise.all(due.slice(i, i + parallel).map((delivery) => deliver(deps, delivery)));
  return due.length;
}

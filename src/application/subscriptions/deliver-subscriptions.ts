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
  /** The longest one send can take (the webhook POST's timeout); less than leaseMs (outbox-config.ts). */
  sendTimeoutMs: number;
  /** The worker's log lines: attempts not recorded because their claim was taken over. */
  log: (line: string) => void;
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

type AttemptRecord = Parameters<SubscriptionStore['recordAttempts']>[0][number];

/** The outcome of a delivery not attempted (dropped, or released unsent). */
const NOT_ATTEMPTED = { statusCode: null, durationMs: 0, error: null };

/** Sends one claimed delivery with its changes (read already): the attempt to record. */
async function deliver(deps: DeliveryDeps, delivery: DueDelivery, changes: Change[]): Promise<AttemptRecord> {
  // The key it was made with was revoked (owner null): the owner's access through it is gone.
  if (delivery.owner === null || (delivery.kind === 'changes' && changes.length === 0))
    return { delivery, outcome: NOT_ATTEMPTED, next: { kind: 'dropped' } };
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
  return { delivery, outcome, next };
}

/** The claimed deliveries' changes: one read per owner (the same viewer) for all of theirs. */
async function changesOf(deps: DeliveryDeps, due: DueDelivery[]): Promise<Map<string, Change[]>> {
  const byOwner = new Map<string, DueDelivery[]>();
  for (const delivery of due) {
    if (delivery.owner === null || delivery.kind === 'test') continue;
    const key = JSON.stringify([delivery.subscription.ownerId, delivery.subscription.apiKeyId]);
    byOwner.set(key, [...(byOwner.get(key) ?? []), delivery]);
  }
  const read = new Map<string, Change[]>();
  await Promise.all(
    [...byOwner.values()].map(async (deliveries) => {
      const owner = deliveries[0]!.owner!;
      const answers = await deps.changes.readChangesAtEach(
        owner,
        deliveries.map((d) => ({ filter: d.subscription.filter, positions: d.changes })),
      );
      deliveries.forEach((d, i) => read.set(d.id, answers[i] ?? []));
    }),
  );
  return read;
}

const PARALLEL_RECEIVERS = 16;

/**
 * Sends up to `limit` due deliveries: claimed at once, their changes read once per owner, sent a
 * few subscriptions at a time (each subscription's one after another, in the order they were
 * queued), and every attempt recorded in one transaction at the end. A worker killed before that
 * leaves them leased: they are sent again, under the same ids, when the lease ends. How many were
 * claimed.
 *
 * The claim's lease bounds its sends (the rule "a send starts only while the lease outlasts it",
 * docs/rules.md): a send that could still be running when the lease ends would go out twice once
 * another worker claims the delivery again. Behind a slow receiver a subscription's later
 * deliveries are therefore released unsent, in order, for the next claim; and an attempt is
 * recorded only while its delivery still holds this claim's lease (recordAttempts).
 */
export async function sendDueDeliveries(deps: DeliveryDeps, limit: number): Promise<number> {
  // Measured before the claim, so the store's lease (from its own clock, later) ends after this one.
  const lastStart = deps.now() + deps.leaseMs - deps.sendTimeoutMs;
  const due = await deps.subscriptions.claimDue(limit, deps.leaseMs);
  if (due.length === 0) return 0;
  const changes = await changesOf(deps, due);
  const lanes = new Map<number, DueDelivery[]>();
  for (const delivery of due)
    lanes.set(delivery.subscription.id, [...(lanes.get(delivery.subscription.id) ?? []), delivery]);
  const queue = [...lanes.values()];
  const records: AttemptRecord[] = [];
  const runner = async () => {
    for (let lane = queue.shift(); lane; lane = queue.shift())
      for (const delivery of lane)
        records.push(
          deps.now() > lastStart
            ? { delivery, outcome: NOT_ATTEMPTED, next: { kind: 'released' } }
            : await deliver(deps, delivery, changes.get(delivery.id) ?? []),
        );
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_RECEIVERS, queue.length) }, runner));
  const lost = await deps.subscriptions.recordAttempts(records, FAILURES_BEFORE_DISABLE);
  // Each lost attempt was sent while another worker may have sent it too (a duplicate under the
  // same id): a lease too short for the sends, or a worker stalled past it (docs/operations.md,
  // "Outbox timing").
  if (lost > 0)
    deps.log(
      `subscription deliveries: ${lost} of ${records.length} attempts not recorded, their lease ` +
        `(${deps.leaseMs} ms) ran out and another worker claimed them`,
    );
  return due.length;
}

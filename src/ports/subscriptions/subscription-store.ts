import type { Viewer } from '../../domain/access.ts';
import type { ChangePosition } from '../../domain/read/change-cursor.ts';
import type { Subscription, SubscriptionFields } from '../../domain/subscriptions/subscriptions.ts';

// Where subscriptions, their deliveries and the delivery log live.

export type DeliveryLogEntry = {
  deliveryId: string;
  kind: 'changes' | 'test';
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  attemptedAt: string;
};

/** A delivery claimed for sending: its subscription as it is now, the owner as a viewer, its changes. */
export type DueDelivery = {
  id: string;
  kind: 'changes' | 'test';
  attempts: number;
  subscription: Subscription & { secret: string | null };
  /** The owner with the key the subscription was made with; null when the key was revoked. */
  owner: Viewer;
  changes: ChangePosition[];
  /**
   * The claim's lease (its end, as the store wrote it): an attempt is recorded only while the
   * delivery still holds it, so a claim that outlived its lease (the delivery claimed again by
   * another worker) cannot overwrite the newer claim's outcome.
   */
  lease: string;
};

export interface SubscriptionStore {
  /** Stores a subscription (secret given for a webhook) unless the owner already has `limit`: null then. */
  create(
    ownerId: number,
    apiKeyId: number | null,
    fields: SubscriptionFields,
    secret: string | null,
    limit: number,
  ): Promise<Subscription | null>;
  find(id: number): Promise<Subscription | null>;
  listByOwner(ownerId: number): Promise<Subscription[]>;
  update(
    id: number,
    changes: {
      name?: string;
      filter?: Subscription['filter'];
      url?: string;
      emailAddressId?: string;
      enabled?: boolean;
    },
  ): Promise<Subscription | null>;
  remove(id: number): Promise<boolean>;
  /** Queues a test delivery (no changes) for the subscription: its id. */
  queueTest(id: number): Promise<string>;
  deliveryLog(id: number, limit: number): Promise<DeliveryLogEntry[]>;

  /**
   * Matches the next batch of stored changes (below the visibility fence, in the feed's order) past
   * the cursor against every enabled subscription at once, writes a delivery per subscription and
   * moves the cursor, in one transaction. The number of changes read (0: nothing new).
   */
  matchNextBatch(batchSize: number, deliveryBatch: number): Promise<number>;
  /** Claims up to `limit` due deliveries for `leaseMs` (another worker skips them meanwhile). */
  claimDue(limit: number, leaseMs: number): Promise<DueDelivery[]>;
  /**
   * Records attempts, in one transaction: each delivered, retried at `retryAt`, given up (failed),
   * dropped, or released unsent (due again at once, for the next claim); a subscription whose failed
   * deliveries reach `disableAfter` in a row is disabled with a notice to its owner. Only the
   * deliveries that still hold their claim's lease are recorded: how many did not (claimed again
   * meanwhile).
   */
  recordAttempts(
    records: readonly {
      delivery: DueDelivery;
      outcome: { statusCode: number | null; durationMs: number; error: string | null };
      next:
        | { kind: 'delivered' }
        | { kind: 'retry'; at: Date }
        | { kind: 'failed' }
        | { kind: 'dropped' }
        | { kind: 'released' };
    }[],
    disableAfter: number,
  ): Promise<number>;
}

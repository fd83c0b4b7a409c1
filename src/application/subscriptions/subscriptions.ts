import { isUnlimited, type Viewer } from '../../domain/access.ts';
import { NotFoundError, ValidationError } from '../../domain/errors.ts';
import { ownsSubscription, requireSubscriber } from '../../domain/subscriptions/access.ts';
import {
  filterOfView,
  parseSubscriptionChanges,
  parseSubscriptionFields,
  requireConfirmedAddress,
  type Subscription,
  SUBSCRIPTIONS_BY_TRUST_LEVEL,
  subscriptionQuotaError,
} from '../../domain/subscriptions/subscriptions.ts';
import type { DeliveryLogEntry, SubscriptionStore } from '../../ports/subscriptions/subscription-store.ts';
import type { WebhookSender } from '../../ports/subscriptions/webhook-sender.ts';
import { readView, type SavedViewDeps } from '../site/saved-views.ts';

// Subscriptions (issue 39 §2, §4): the owner's create, list, read, change, delete, test delivery
// and delivery log. Who may is src/domain/subscriptions/access.ts; a subscription of someone else
// is "not found". A webhook URL passes the SSRF guard when it is saved (and again at each send).

export type SubscriptionDeps = SavedViewDeps & {
  subscriptions: SubscriptionStore;
  webhooks: WebhookSender;
  /** A new webhook secret (whsec_…), drawn by the adapter. */
  newSecret: () => string;
  /** The owner's confirmed e-mail addresses (the e-mail feature's), for the e-mail channel. */
  confirmedAddresses: (userId: number) => Promise<{ id: string; address: string }[]>;
};

const notFound = () => new NotFoundError('no such subscription');

/** A new subscription, with its secret (shown this once). From a saved view (`view`: its code) or a filter. */
export async function createSubscription(
  deps: SubscriptionDeps,
  viewer: Viewer,
  body: unknown,
): Promise<{ subscription: Subscription; secret: string | null }> {
  const owner = requireSubscriber(viewer);
  const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  // A view is the caller's own or one they may read (a public one); its map box is not kept in it.
  const view = typeof input.view === 'string' ? await readView(deps, viewer, input.view) : null;
  const fields = parseSubscriptionFields(
    body,
    view ? filterOfView(view, (input.filter as { bounds?: unknown } | undefined)?.bounds) : null,
  );
  if (fields.channel.kind === 'webhook') await deps.webhooks.checkDestination(fields.channel.url);
  else requireConfirmedAddress(fields.channel.emailAddressId, await deps.confirmedAddresses(owner.id));
  const limit = isUnlimited(owner) ? Infinity : SUBSCRIPTIONS_BY_TRUST_LEVEL[owner.trustLevel];
  const secret = fields.channel.kind === 'webhook' ? deps.newSecret() : null;
  const created = await deps.subscriptions.create(
    owner.id,
    owner.key?.id ?? null,
    fields,
    secret,
    Number.isFinite(limit) ? limit : Number.MAX_SAFE_INTEGER,
  );
  if (!created) throw subscriptionQuotaError(limit);
  return { subscription: created, secret };
}

export async function listSubscriptions(deps: SubscriptionDeps, viewer: Viewer): Promise<Subscription[]> {
  return deps.subscriptions.listByOwner(requireSubscriber(viewer).id);
}

const IDS = /^[1-9]\d{0,15}$/;

export async function readSubscription(
  deps: SubscriptionDeps,
  viewer: Viewer,
  id: string,
): Promise<Subscription> {
  const caller = requireSubscriber(viewer);
  const found = IDS.test(id) ? await deps.subscriptions.find(Number(id)) : null;
  if (!found || !ownsSubscription(caller, found)) throw notFound();
  return found;
}

export async function changeSubscription(
  deps: SubscriptionDeps,
  viewer: Viewer,
  id: string,
  body: unknown,
): Promise<Subscription> {
  const found = await readSubscription(deps, viewer, id);
  const changes = parseSubscriptionChanges(body);
  if (changes.url !== undefined) await deps.webhooks.checkDestination(changes.url);
  if (changes.emailAddressId !== undefined && found.channel.kind !== 'email')
    throw new ValidationError('emailAddressId is for the email channel only', { field: 'emailAddressId' });
  // A new address, or enabling again: the address it will mail must be confirmed now.
  if (found.channel.kind === 'email' && (changes.emailAddressId !== undefined || changes.enabled === true))
    requireConfirmedAddress(
      changes.emailAddressId ?? found.channel.emailAddressId,
      await deps.confirmedAddresses(found.ownerId),
    );
  const changed = await deps.subscriptions.update(found.id, changes);
  if (!changed) throw notFound();
  return changed;
}

export async function deleteSubscription(deps: SubscriptionDeps, viewer: Viewer, id: string): Promise<void> {
  const found = await readSubscription(deps, viewer, id);
  if (!(await deps.subscriptions.remove(found.id))) throw notFound();
}

/** Queues a test delivery (a signed POST with no changes): its id, to find in the delivery log. */
export async function testSubscription(deps: SubscriptionDeps, viewer: Viewer, id: string): Promise<string> {
  const found = await readSubscription(deps, viewer, id);
  return deps.subscriptions.queueTest(found.id);
}

export async function listDeliveries(
  deps: SubscriptionDeps,
  viewer: Viewer,
  id: string,
): Promise<DeliveryLogEntry[]> {
  const found = await readSubscription(deps, viewer, id);
  return deps.subscriptions.deliveryLog(found.id, 100);
}

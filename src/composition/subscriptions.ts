import { guardedWebhookPoster } from '../adapters/fetch/webhook-poster.ts';
import { subscriptionRoutes } from '../adapters/http/subscriptions/subscription-routes.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import { queueSubscriptionRound, startSubscriptionWorker } from '../adapters/jobs/subscription-jobs.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import { postgresSubscriptionStore } from '../adapters/postgres/subscriptions/subscription-store.ts';
import { subscriptionsPage } from '../adapters/pages/subscriptions/subscriptions-page.ts';
import { newWebhookSecret } from '../adapters/security/webhook-signature.ts';
import type { DeliveryDeps } from '../application/subscriptions/deliver-subscriptions.ts';
import type { SubscriptionDeps } from '../application/subscriptions/subscriptions.ts';
import type { SavedViewDeps } from '../application/site/saved-views.ts';
import type { DigestSender } from '../ports/subscriptions/digest-sender.ts';
import type { FeatureWorkers, Infrastructure } from './infrastructure.ts';
import { changeFeedOn } from './read.ts';

// Subscriptions (issue 39 §2): saved views with deliveries. The routes and page on the HTTP pool;
// the worker (matching and sending, adapters/jobs/subscription-jobs.ts) on the jobs' pool, reading
// the change feed on the primary. Webhooks go through the SSRF guard of scheduled fetches, with
// its setting for private addresses. The e-mail channel's DigestSender is the e-mail feature's:
// null until it is wired here.

const WEBHOOK_TIMEOUT_MS = 10_000;

export function composeSubscriptions(
  infra: Pick<Infrastructure, 'config' | 'boss' | 'log'>,
  on: DatabasePool,
  needs: {
    views: SavedViewDeps;
    digests?: DigestSender | null;
    /** The owner's confirmed e-mail addresses, offered by the page for the e-mail channel. */
    confirmedAddresses?: (userId: number) => Promise<{ id: string; address: string }[]>;
  },
) {
  const { config } = infra;
  const subscriptions = postgresSubscriptionStore(on);
  const webhooks = guardedWebhookPoster({
    timeoutMs: WEBHOOK_TIMEOUT_MS,
    allowPrivateAddresses: config.ingest.fetch.allowPrivateAddresses,
  });
  const deps: SubscriptionDeps = {
    ...needs.views,
    subscriptions,
    webhooks,
    newSecret: newWebhookSecret,
    confirmedAddresses: needs.confirmedAddresses ?? (async () => []),
  };
  return {
    http: (csrfSecret: string): HttpFeature => ({
      routes: async (app) => subscriptionRoutes(app, { subscriptions: deps }),
      pages: async (app) => {
        await app.register(subscriptionsPage, {
          subscriptions: deps,
          csrfSecret,
        });
      },
    }),
    workers: (): FeatureWorkers => {
      const delivery: DeliveryDeps = {
        subscriptions,
        changes: changeFeedOn(on),
        webhooks,
        digests: needs.digests ?? null,
        random: Math.random,
        now: Date.now,
        publicBaseUrl: config.publicBaseUrl ?? 'http://localhost',
        retryBaseMs: config.outboxes.deliveries.retryBaseMs,
        leaseMs: config.outboxes.deliveries.leaseMs,
        sendTimeoutMs: WEBHOOK_TIMEOUT_MS,
        log: infra.log,
      };
      return {
        start: () => startSubscriptionWorker(infra.boss, delivery),
        periodicTasks: [{ name: 'subscription deliveries', run: () => queueSubscriptionRound(infra.boss) }],
      };
    },
  };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  changeSubscription,
  createSubscription,
  deleteSubscription,
  listDeliveries,
  listSubscriptions,
  readSubscription,
  type SubscriptionDeps,
  testSubscription,
} from '../../../application/subscriptions/subscriptions.ts';
import type { Subscription } from '../../../domain/subscriptions/subscriptions.ts';
import { errorResponses } from '../error-body.ts';
import { USER_ONLY } from '../require-user.ts';
import { MessageSchema, NoQuery } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import {
  CreatedSubscription,
  DeliveryLog,
  NewSubscription,
  SubscriptionChange,
  SubscriptionDoc,
  SubscriptionList,
  SubscriptionParams,
  TestQueued,
} from './subscription-schemas.ts';

// The subscriptions API (issue 39 §2, §4): create, list, read, change and delete a subscription,
// queue a test delivery, read the delivery log. The use cases
// (application/subscriptions/subscriptions.ts) decide who may: the owner, with a session or a
// write API key.

/** A subscription as the API shows it (never its secret). */
function subscriptionDocument(subscription: Subscription) {
  const { filter, channel } = subscription;
  return {
    id: String(subscription.id),
    name: subscription.name,
    view: subscription.viewCode,
    filter: {
      catalog: filter.catalog,
      datasets: filter.datasets,
      bounds: filter.bounds,
      startDate: filter.dates.from,
      endDate: filter.dates.to,
    },
    channel: channel.kind,
    url: channel.kind === 'webhook' ? channel.url : null,
    emailAddressId: channel.kind === 'email' ? channel.emailAddressId : null,
    enabled: subscription.enabled,
    consecutiveFailures: subscription.consecutiveFailures,
    disabledReason: subscription.disabledReason,
    createdAt: subscription.createdAt,
  };
}

export const subscriptionRoutes: FastifyPluginAsyncTypebox<{ subscriptions: SubscriptionDeps }> = async (
  app,
  { subscriptions: deps },
) => {
  const tags = ['subscriptions'];
  app.post(
    '/api/subscriptions',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Subscribe to a view: matching changes are delivered to a webhook (or by e-mail)',
        description:
          'From a saved view (`view`, its code; `filter.bounds` adds the map box) or a `filter`. A ' +
          'webhook gets signed POSTs (Standard Webhooks) of the changes /api/v1/changes would show you; ' +
          'the answer holds the signing `secret`, shown this once. Counts against your quota of ' +
          'subscriptions (by trust level).',
        querystring: NoQuery,
        body: NewSubscription,
        response: { 201: CreatedSubscription, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const created = await createSubscription(deps, viewerOf(request), request.body);
      return reply
        .code(201)
        .send({ subscription: subscriptionDocument(created.subscription), secret: created.secret });
    },
  );

  app.get(
    '/api/subscriptions',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Your subscriptions',
        querystring: NoQuery,
        response: { 200: SubscriptionList, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => ({
      docs: (await listSubscriptions(deps, viewerOf(request))).map(subscriptionDocument),
    }),
  );

  app.get(
    '/api/subscriptions/:id',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'A subscription of yours',
        params: SubscriptionParams,
        querystring: NoQuery,
        response: { 200: SubscriptionDoc, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      subscriptionDocument(await readSubscription(deps, viewerOf(request), request.params.id)),
  );

  app.patch(
    '/api/subscriptions/:id',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Change a subscription, or enable a disabled one again',
        params: SubscriptionParams,
        querystring: NoQuery,
        body: SubscriptionChange,
        response: { 200: SubscriptionDoc, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      subscriptionDocument(
        await changeSubscription(deps, viewerOf(request), request.params.id, request.body),
      ),
  );

  app.delete(
    '/api/subscriptions/:id',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Delete a subscription (its queued deliveries are not sent)',
        params: SubscriptionParams,
        querystring: NoQuery,
        response: { 200: MessageSchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await deleteSubscription(deps, viewerOf(request), request.params.id);
      return { message: 'The subscription was deleted.' };
    },
  );

  app.post(
    '/api/subscriptions/:id/test',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: 'Send a test delivery (a signed POST with no changes)',
        description: 'Queued: its outcome appears in the delivery log within seconds.',
        params: SubscriptionParams,
        querystring: NoQuery,
        response: { 202: TestQueued, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const deliveryId = await testSubscription(deps, viewerOf(request), request.params.id);
      return reply.code(202).send({ deliveryId, message: 'The test delivery was queued.' });
    },
  );

  app.get(
    '/api/subscriptions/:id/deliveries',
    {
      config: USER_ONLY,
      schema: {
        tags,
        summary: "A subscription's delivery log (the last 100 attempts)",
        params: SubscriptionParams,
        querystring: NoQuery,
        response: { 200: DeliveryLog, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => ({ docs: await listDeliveries(deps, viewerOf(request), request.params.id) }),
  );
};

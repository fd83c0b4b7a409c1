import type { MatrixFixture } from './route-authorization-fixture.ts';
import { CSRF, get, type MatrixRow, unique, USER } from './route-authorization-helpers.ts';

// Rows of the route authorization matrix for subscriptions (issue 39 §2, §4): the fixture's owner
// makes a subscription for each request. A subscription is personal: only its owner (a session or
// a write key; a read key is refused, 403) manages it, admins included get a 404 for another's.

async function subscription(fx: MatrixFixture): Promise<string> {
  const created = await fx.app.inject({
    method: 'POST',
    url: '/api/subscriptions',
    headers: { authorization: `Bearer ${fx.tokens.owner}` },
    payload: { name: `Hook ${unique()}`, url: 'https://hooks.example.org/chronomap' },
  });
  if (created.statusCode !== 201) throw new Error(`subscribing failed: ${created.body}`);
  return (created.json() as { subscription: { id: string } }).subscription.id;
}

const ofSubscription = (path: (id: string) => string, payload?: unknown) => async (fx: MatrixFixture) => ({
  url: path(await subscription(fx)),
  ...(payload === undefined ? {} : { payload }),
});

const SUBSCRIBER = 'the owner (a session or a write key; a read key 403); 404 for others, admins too';
const mine = (ok: number) => ({ expect: [401, 404, ok, 404] as const, keys: [403, ok, ok] as const });

export function subscriptionRows(): Record<string, MatrixRow> {
  const form = (path: (id: string) => string): MatrixRow => ({
    expect: [303, 403, 403, 403],
    rule: CSRF,
    request: ofSubscription(path, {}),
  });
  return {
    'POST /api/subscriptions': {
      expect: [401, 201, 201, 201],
      keys: [403, 201, 201],
      rule: `${USER} (a session or a write key), within their quota`,
      request: () => ({
        url: '/api/subscriptions',
        payload: { name: `Hook ${unique()}`, url: 'https://hooks.example.org/chronomap' },
      }),
    },
    'GET /api/subscriptions': {
      expect: [401, 200, 200, 200],
      keys: [403, 200, 200],
      rule: `${USER} (a session or a write key); lists the caller's own`,
      request: get('/api/subscriptions'),
    },
    'GET /api/subscriptions/:id': {
      ...mine(200),
      rule: SUBSCRIBER,
      request: ofSubscription((id) => `/api/subscriptions/${id}`),
    },
    'PATCH /api/subscriptions/:id': {
      ...mine(200),
      rule: SUBSCRIBER,
      request: ofSubscription((id) => `/api/subscriptions/${id}`, { name: 'Renamed' }),
    },
    'DELETE /api/subscriptions/:id': {
      ...mine(200),
      rule: SUBSCRIBER,
      request: ofSubscription((id) => `/api/subscriptions/${id}`),
      destructive: true,
    },
    'POST /api/subscriptions/:id/test': {
      ...mine(202),
      rule: SUBSCRIBER,
      request: ofSubscription((id) => `/api/subscriptions/${id}/test`),
    },
    'GET /api/subscriptions/:id/deliveries': {
      ...mine(200),
      rule: SUBSCRIBER,
      request: ofSubscription((id) => `/api/subscriptions/${id}/deliveries`),
    },
    'GET /account/subscriptions': {
      expect: [303, 200, 200, 200],
      rule: "account pages: a login (anonymous: to the login page); the caller's own subscriptions",
      request: get('/account/subscriptions'),
    },
    'POST /account/subscriptions': {
      expect: [303, 403, 403, 403],
      rule: CSRF,
      request: () => ({ url: '/account/subscriptions', payload: {} }),
    },
    'POST /account/subscriptions/:id/test': form((id) => `/account/subscriptions/${id}/test`),
    'POST /account/subscriptions/:id/enable': form((id) => `/account/subscriptions/${id}/enable`),
    'POST /account/subscriptions/:id/delete': form((id) => `/account/subscriptions/${id}/delete`),
  };
}

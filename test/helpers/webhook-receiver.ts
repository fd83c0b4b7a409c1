import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import { guardedWebhookPoster } from '../../src/adapters/fetch/webhook-poster.ts';
import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';
import { postgresSubscriptionStore } from '../../src/adapters/postgres/subscriptions/subscription-store.ts';
import type { DeliveryDeps } from '../../src/application/subscriptions/deliver-subscriptions.ts';
import { changeFeedOn } from '../../src/composition/read.ts';
import { insertAccessFixture } from './accounts.ts';
import { testDatabase } from './database.ts';

// A webhook receiver on loopback for the subscription tests: it verifies every delivery's
// signature with the `standardwebhooks` package (the signer under test is our own), counts them
// and answers with the statuses the test queues (200 when none is queued). `hold` keeps requests
// unanswered until released (the kill -9 test).

export type Received = {
  id: string;
  verified: boolean;
  body: { type: string; subscription: { id: number; name: string }; changes: ChangeItem[] };
};
export type ChangeItem = {
  cursor: string;
  kind: string;
  eventId: number;
  event?: { title: string; location: { longitude: number; latitude: number } | null };
};

export async function webhookReceiver(t: Test) {
  const received: Received[] = [];
  const statuses: number[] = [];
  let secret = '';
  let held: (() => void)[] | null = null;
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      let verified = false;
      try {
        new Webhook(secret).verify(body, request.headers as Record<string, string>);
        verified = true;
      } catch {
        verified = false;
      }
      const answer = () => {
        received.push({ id: String(request.headers['webhook-id']), verified, body: JSON.parse(body) });
        response.writeHead(statuses.shift() ?? 200).end();
      };
      if (held) held.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    /** What the next requests are answered (in order). */
    answer: (...codes: number[]) => statuses.push(...codes),
    useSecret: (value: string) => {
      secret = value;
    },
    /** Requests wait unanswered from now on; `release` answers those waiting and stops holding. */
    hold: () => {
      held = [];
    },
    waiting: () => held?.length ?? 0,
    release: () => {
      const waiting = held ?? [];
      held = null;
      for (const answer of waiting) answer();
    },
  };
}

/** The worker's dependencies on a test database: loopback allowed, retries at once. */
export function deliveryDeps(
  pool: DatabasePool,
  options: {
    leaseMs?: number;
    sendTimeoutMs?: number;
    now?: () => number;
    log?: (line: string) => void;
  } = {},
): DeliveryDeps {
  const sendTimeoutMs = options.sendTimeoutMs ?? 5_000;
  return {
    subscriptions: postgresSubscriptionStore(pool),
    changes: changeFeedOn(pool),
    webhooks: guardedWebhookPoster({ timeoutMs: sendTimeoutMs, allowPrivateAddresses: true }),
    digests: null,
    random: () => 0.5,
    now: options.now ?? Date.now,
    publicBaseUrl: 'http://localhost',
    retryBaseMs: 0,
    leaseMs: options.leaseMs ?? 60_000,
    sendTimeoutMs,
    log: options.log ?? (() => {}),
  };
}

/**
 * A test database with the access fixture, an owner (trust level 3) subscribed by webhook to the
 * whole `open` catalog, the receiver verifying with the subscription's secret, and `events` events
 * stored in the `open-data` dataset after the subscription (titles `${prefix} n`).
 */
export async function subscribedReceiver(t: Test, options: { name: string; events: number }) {
  const db = await testDatabase(t);
  const owner = await db.pool.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
    insert into users (email, password_hash, trust_level) values (${`${options.name}@example.org`}, 'x', 3) returning id`);
  await insertAccessFixture(db, owner);
  const receiver = await webhookReceiver(t);
  const secret = `whsec_${Buffer.from('a secret of 24 bytes!!!!').toString('base64')}`;
  receiver.useSecret(secret);
  const store = postgresSubscriptionStore(db.pool);
  const filter = {
    catalog: 'open',
    datasets: [],
    bounds: null,
    dates: { from: null, to: null },
    dateField: { kind: 'eventTimestamp' as const },
  };
  await store.create(
    owner,
    null,
    { name: options.name, filter, channel: { kind: 'webhook', url: receiver.url }, viewCode: null },
    secret,
    10,
  );
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select d.id, d.catalog_id, ${options.name} || n, ${options.name} || ' ' || n, '{}'::jsonb,
           st_setsrid(st_makepoint(13.4, 52.5), 4326), '2026-01-01'
    from datasets d cross join generate_series(1, ${options.events}) n where d.slug = 'open-data'`);
  return { db, receiver, store };
}

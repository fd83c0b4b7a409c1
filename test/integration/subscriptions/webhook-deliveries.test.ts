import t from 'tap';
import { Type } from 'typebox';
import { guardedWebhookPoster } from '../../../src/adapters/fetch/webhook-poster.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import {
  matchStoredChanges,
  sendDueDeliveries,
} from '../../../src/application/subscriptions/deliver-subscriptions.ts';
import { FAILURES_BEFORE_DISABLE } from '../../../src/domain/subscriptions/subscriptions.ts';
import { accountsApp, insertAccessFixture } from '../../helpers/accounts.ts';
import { changesVisible } from '../../helpers/change-log.ts';
import { deliveryDeps, webhookReceiver } from '../../helpers/webhook-receiver.ts';

// Webhook deliveries of subscriptions (issue 39 §2) to a real receiver on loopback that verifies
// every signature with the `standardwebhooks` package: matching by box, catalog and dataset,
// back-dated events, retries under one webhook-id, disabling after repeated failure with a notice
// and enabling again, deliveries stopping when access is lost (dataset made private, key
// revoked), the quota, and the SSRF guard. The worker's steps are called directly, so nothing
// here waits on time.

const BOX = { north: 53, south: 52, east: 13.4025, west: 13 };

t.test('webhook subscriptions', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t, {
    config: {
      ingest: {
        ...(await import('../../helpers/app.ts')).testConfig().ingest,
        fetch: { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateAddresses: true },
      },
    },
  });
  const owner = await createUser({ trustLevel: 3 });
  const stranger = await createUser({ trustLevel: 1 });
  await insertAccessFixture(db, owner.id);
  const session = as(await login(owner));
  const receiver = await webhookReceiver(t);
  const deps = deliveryDeps(db.pool);
  const round = async () => {
    await changesVisible(db.pool);
    await matchStoredChanges(deps);
    return sendDueDeliveries(deps, 100);
  };
  const addEvent = (dataset: string, title: string, lon: number, when = '2026-01-01') =>
    db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      select id, catalog_id, ${title}, ${title}, '{}'::jsonb, st_setsrid(st_makepoint(${lon}, 52.5), 4326), ${when}::timestamptz
      from datasets where slug = ${dataset}`);

  // The fixture's own events were stored before any subscription: none is delivered.
  const created = await session('POST', '/api/subscriptions', {
    name: 'Open, in the box',
    url: receiver.url,
    filter: { catalog: 'open', bounds: BOX },
  });
  t.equal(created.statusCode, 201, created.body);
  const { subscription, secret } = created.json() as { subscription: { id: string }; secret: string };
  t.match(secret, /^whsec_[A-Za-z0-9+/]{32}$/, 'a Standard Webhooks secret, shown once');
  t.notOk(
    JSON.stringify((await session('GET', `/api/subscriptions/${subscription.id}`)).json()).includes(secret),
  );
  receiver.useSecret(secret);
  t.equal(await round(), 0, 'nothing stored since: nothing to deliver');

  await addEvent('open-data', 'in the box', 13.401);
  await addEvent('open-data', 'outside the box', 14.5);
  await addEvent('hidden-in-open', 'private dataset', 13.401);
  await addEvent('my-data', 'other catalog', 13.401);
  await addEvent('open-data', 'back-dated', 13.402, '1850-01-01');
  t.equal(await round(), 1, 'one delivery for the batch');
  t.equal(receiver.received.length, 1);
  const first = receiver.received[0]!;
  t.ok(first.verified, 'the signature verifies with the standardwebhooks package');
  t.match(first.id, /^msg_[0-9a-f]{32}$/);
  t.same(
    first.body.changes.map((c) => [c.kind, c.event?.title]),
    [
      ['created', 'in the box'],
      ['created', 'back-dated'],
    ],
    'the catalog and box match in stored order, a back-dated event too; not a private dataset of someone else',
  );
  t.ok(
    first.body.changes.every((c) => typeof c.cursor === 'string'),
    "the change feed's items",
  );

  // Retries: 500 then 200, the same webhook-id; both attempts in the log.
  receiver.answer(500);
  await addEvent('open-data', 'retried', 13.4011);
  await round();
  t.equal(await sendDueDeliveries(deps, 100), 1, 'the failed delivery is due again');
  const [failed, retried] = receiver.received.slice(1);
  t.equal(failed?.id, retried?.id, 'the retry carries the same webhook-id');
  t.ok(failed?.verified && retried?.verified);
  const log = (await session('GET', `/api/subscriptions/${subscription.id}/deliveries`)).json() as {
    docs: { statusCode: number; attempt: number; deliveryId: string }[];
  };
  t.same(
    log.docs.slice(0, 2).map((d) => [d.attempt, d.statusCode]),
    [
      [2, 200],
      [1, 500],
    ],
    'the delivery log, newest first',
  );

  // A test delivery: signed, no changes.
  const test = await session('POST', `/api/subscriptions/${subscription.id}/test`);
  t.equal(test.statusCode, 202);
  await sendDueDeliveries(deps, 100);
  t.match(receiver.received.at(-1), {
    id: test.json().deliveryId,
    verified: true,
    body: { type: 'test', changes: [] },
  });

  // Failing again and again: disabled with a notice; nothing is matched while disabled; enabled
  // again, the delivery given up is sent again.
  const before = receiver.received.length;
  receiver.answer(...Array<number>(FAILURES_BEFORE_DISABLE).fill(503));
  await addEvent('open-data', 'while failing', 13.4012);
  await round();
  for (let i = 1; i < FAILURES_BEFORE_DISABLE; i += 1) await sendDueDeliveries(deps, 100);
  t.equal(receiver.received.length - before, FAILURES_BEFORE_DISABLE, 'one attempt per failure');
  const disabled = (await session('GET', `/api/subscriptions/${subscription.id}`)).json();
  t.match(disabled, { enabled: false, consecutiveFailures: FAILURES_BEFORE_DISABLE, disabledReason: /503/ });
  const notices = await db.pool.any(sql.type(row(Type.Object({ message: Type.String() })))`
    select message from account_notices where user_id = ${owner.id} and kind = 'subscription' and dismissed_at is null`);
  t.equal(notices.length, 1, 'the owner is told once');
  await addEvent('open-data', 'while disabled', 13.4013);
  await round();
  t.equal(receiver.received.length - before, FAILURES_BEFORE_DISABLE, 'nothing is sent while disabled');
  const enabled = await session('PATCH', `/api/subscriptions/${subscription.id}`, { enabled: true });
  t.match(enabled.json(), { enabled: true, consecutiveFailures: 0, disabledReason: null });
  await round();
  await sendDueDeliveries(deps, 100);
  const after = receiver.received.slice(before + FAILURES_BEFORE_DISABLE);
  t.same(
    [...new Set(after.flatMap((r) => r.body.changes.map((c) => c.event?.title)))],
    ['while failing'],
    'enabled again, the delivery given up is sent (what was stored while disabled is not)',
  );

  // Enabling an enabled subscription replays nothing: a delivery given up before a later delivered
  // one (here the first, marked failed) stays failed.
  const [oldest] = await db.pool.any(sql.type(row(Type.Object({ id: Type.String() })))`
    update subscription_deliveries set status = 'failed', finished_at = now() - interval '1 day'
    where id = (select id from subscription_deliveries where subscription_id = ${subscription.id}
                and kind = 'changes' order by created_at limit 1)
    returning id`);
  const again = await session('PATCH', `/api/subscriptions/${subscription.id}`, { enabled: true });
  t.equal(again.statusCode, 200);
  const [kept] = await db.pool.any(sql.type(row(Type.Object({ status: Type.String() })))`
    select status from subscription_deliveries where id = ${oldest?.id ?? ''}`);
  t.equal(kept?.status, 'failed', 'enabling an enabled subscription sends nothing again');

  // Access lost: the dataset made private (not the owner's) is no longer delivered.
  const sent = receiver.received.length;
  await addEvent('open-data', 'before privacy', 13.4014);
  await db.pool.query(sql.unsafe`update datasets set is_public = false where slug = 'open-data'`);
  await round();
  t.equal(receiver.received.length, sent, 'changes the owner can no longer read are not delivered');
  await db.pool.query(sql.unsafe`update datasets set is_public = true where slug = 'open-data'`);

  // A subscription made with a write key stops when the key is revoked.
  const key = await session('POST', '/api/api-keys', { name: 'hooks', scope: 'write' });
  const keyed = as(key.json().secret as string);
  const byKey = await keyed('POST', '/api/subscriptions', {
    name: 'by key',
    url: receiver.url,
    filter: { datasets: ['my-data'] },
  });
  t.equal(byKey.statusCode, 201, byKey.body);
  receiver.useSecret(byKey.json().secret);
  // This subscription's own deliveries: at-least-once, another subscription's retry may arrive in
  // the same round (a slow answer under load counts as a failure and is sent again).
  const keyedId = (byKey.json() as { subscription: { id: string } }).subscription.id;
  const viaKey = () => receiver.received.filter((r) => String(r.body.subscription.id) === keyedId);
  await addEvent('my-data', 'seen through the key', 13.401);
  await round();
  t.same(
    viaKey().flatMap((r) => r.body.changes.map((c) => c.event?.title)),
    ['seen through the key'],
  );
  t.ok(viaKey().every((r) => r.verified));
  await db.pool.query(sql.unsafe`update api_keys set revoked_at = now() where id = ${key.json().doc.id}`);
  const count = viaKey().length;
  await addEvent('my-data', 'after the revocation', 13.401);
  await round();
  t.equal(viaKey().length, count, 'nothing after the key was revoked');

  // No filter: every dataset of every catalog is watched (the matcher reads the events of the
  // datasets some subscription names, here all of them), and what the owner may read is delivered.
  const everything = await session('POST', '/api/subscriptions', { name: 'everything', url: receiver.url });
  t.equal(everything.statusCode, 201, everything.body);
  receiver.useSecret(everything.json().secret);
  const everythingId = (everything.json() as { subscription: { id: string } }).subscription.id;
  await addEvent('open-data', 'open, unfiltered', 20);
  await addEvent('hidden-in-open', 'private, unfiltered', 20);
  await addEvent('my-data', 'mine, unfiltered', 20);
  await round();
  t.same(
    receiver.received
      .filter((r) => String(r.body.subscription.id) === everythingId)
      .flatMap((r) => r.body.changes.map((c) => c.event?.title)),
    ['open, unfiltered', 'mine, unfiltered'],
    'both catalogs, not a private dataset of someone else',
  );

  // Who may: anonymous 401, a read key 403, someone else's subscription 404.
  t.equal((await as(null)('GET', '/api/subscriptions')).statusCode, 401);
  const reader = await session('POST', '/api/api-keys', { name: 'reader', scope: 'read' });
  t.equal((await as(reader.json().secret)('GET', '/api/subscriptions')).statusCode, 403);
  const other = as(await login(stranger));
  t.equal((await other('GET', `/api/subscriptions/${subscription.id}`)).statusCode, 404);
  t.equal((await other('DELETE', `/api/subscriptions/${subscription.id}`)).statusCode, 404);
  t.equal((await other('GET', '/api/subscriptions/abc')).statusCode, 400);

  // Quota: trust level 1 keeps 5.
  for (let i = 0; i < 5; i += 1)
    t.equal(
      (await other('POST', '/api/subscriptions', { name: `n${i}`, url: receiver.url })).statusCode,
      201,
    );
  const refused = await other('POST', '/api/subscriptions', { name: 'sixth', url: receiver.url });
  t.equal(refused.statusCode, 403);
  t.match(refused.json(), { code: 'QUOTA_EXCEEDED' });

  // Bad input: the spec's 400s.
  for (const body of [
    { name: 'x', url: 'ftp://example.org' },
    { name: 'x', url: receiver.url, filter: { bounds: { north: 1, south: 2, east: 0, west: 0 } } },
    { name: '', url: receiver.url },
  ]) {
    const response = await session('POST', '/api/subscriptions', body);
    t.equal(response.statusCode, 400, JSON.stringify(body));
  }
});

t.test('the SSRF guard refuses private destinations when they are not allowed', async (t) => {
  const guarded = guardedWebhookPoster({ timeoutMs: 1000, allowPrivateAddresses: false });
  for (const url of [
    'http://127.0.0.1:9/hook',
    'http://[::1]/hook',
    'http://10.1.2.3/',
    'http://localhost:9/',
  ])
    await t.rejects(guarded.checkDestination(url), { code: 'SSRF_BLOCKED' }, url);
  const sent = await guarded.send({
    url: 'http://127.0.0.1:9/hook',
    secret: 'whsec_AAAA',
    id: 'msg_1',
    body: '{}',
  });
  t.match(sent, { statusCode: null, error: /private or reserved/ }, 'and refuses to send there');
});

import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../src/adapters/postgres/database.ts';
import { JAPAN_IN_JANUARY, signedInOverJapan } from '../helpers/japan-in-chromium.ts';
import { webhookReceiver } from '../helpers/webhook-receiver.ts';

// Subscriptions in Debian's Chromium (issue 39 §4): from the Explore page's "Subscribe to this
// view" to the Subscriptions page with the view filled in, the signing secret shown once with a
// Copy button, a test delivery and then a real one reaching a receiver on loopback through the
// service's own worker (pg-boss), both in the delivery log. With CHRONOMAP_SCREENSHOTS=1 the run
// refreshes docs/screenshots/subscriptions.png.

t.test('subscribe to the Explore view, test the webhook, read the log', async (t) => {
  const { db, catalogId, base, page, shot } = await signedInOverJapan(t, {
    path: '/account/subscriptions',
    viewport: { width: 1280, height: 900 },
    ingest: { fetch: { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateAddresses: true } },
  });
  const receiver = await webhookReceiver(t);
  t.ok(await page.isVisible('nav a[href="/account/subscriptions"]'), 'in the account navigation');

  // The Explore page on Japan in January: "Subscribe to this view".
  await page.goto(`${base}${JAPAN_IN_JANUARY}`);
  await page.waitForFunction(() =>
    Boolean((globalThis as unknown as { explore?: { map?: unknown } }).explore?.map),
  );
  await page.click('#subscribe-view');
  await page.waitForURL(/\/account\/subscriptions\?/);
  const bounds = JSON.parse(await page.inputValue('#sub-bounds')) as Record<string, number>;
  t.ok(
    bounds.west! < 139.69 && bounds.east! > 139.69 && bounds.south! < 35.68 && bounds.north! > 35.68,
    'the map box',
  );
  t.equal(await page.inputValue('#sub-start'), '2026-01-01', 'the time window');

  await page.fill('#sub-name', 'Japan in January');
  await page.fill('#sub-url', receiver.url);
  await page.click('#new-subscription button[type=submit]');
  const secret = await page.inputValue('#webhook-secret');
  t.match(secret, /^whsec_/, 'the secret, shown once');
  t.ok(await page.isVisible('button[data-copy="webhook-secret"]'), 'with a Copy button');
  receiver.useSecret(secret);

  // A test delivery, then an event of the view: both reach the receiver through the worker.
  await page.click('form[action$="/test"] button');
  t.match(await page.textContent('.flash'), /test delivery was queued/);
  await db.pool.query(sql.unsafe`
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select id, catalog_id, 'kyoto', 'Kyoto', '{}'::jsonb, st_setsrid(st_makepoint(135.77, 35.01), 4326), '2026-01-15'
    from datasets where catalog_id = ${catalogId} limit 1`);
  for (let i = 0; i < 600 && receiver.received.length < 2; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(
    receiver.received.map((r) => [r.body.type, r.verified]).sort(),
    [
      ['changes', true],
      ['test', true],
    ],
    'a signed test delivery and a signed delivery of the new event',
  );
  t.equal(receiver.received.find((r) => r.body.type === 'changes')?.body.changes[0]?.event?.title, 'Kyoto');

  // The worker records a claim's attempts after its sends: the receiver can have both before the
  // log does. Wait (bounded) for both attempts to be recorded before reading the page.
  const recorded = () =>
    db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int as n from subscription_attempts`);
  for (let i = 0; i < 600 && (await recorded()) < 2; i += 1)
    await new Promise((resolve) => setTimeout(resolve, 100));
  await page.goto(`${base}/account/subscriptions`);
  const log = await page.textContent('.delivery-log');
  t.match(log, /\(test\)/, 'the test delivery in the log');
  t.equal((log?.match(/200/g) ?? []).length >= 2, true, 'both answered 200');
  await shot('subscriptions');
});

import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { createDigestSender } from '../../../src/application/email/event-digest.ts';
import {
  matchStoredChanges,
  sendDueDeliveries,
} from '../../../src/application/subscriptions/deliver-subscriptions.ts';
import { accountsApp, insertAccessFixture } from '../../helpers/accounts.ts';
import { changesVisible } from '../../helpers/change-log.ts';
import { deliveryDeps } from '../../helpers/webhook-receiver.ts';
import { decodedBody, emailOnLoopback, header, htmlPart } from '../email/smtp-capture.ts';

// A subscription's e-mail channel end to end (issue 39 §2): the subscriptions' worker hands the
// matched changes to the e-mail feature (the DigestSender port), whose outbox mails a digest to the
// owner's confirmed address through a real SMTP server on loopback; an address that is not the
// owner's confirmed one is refused when the subscription is made or changed; the digest's
// one-click unsubscribe stops that subscription's mails, and the delivery log says why. The worker's steps are called directly: nothing waits on time.

const BASE = 'https://chronomap.example';

t.test('e-mail digests of a subscription', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t);
  const owner = await createUser({ trustLevel: 3 });
  await insertAccessFixture(db, owner.id);
  const session = as(await login(owner));

  const { smtp, store, addresses, sender: mails } = await emailOnLoopback(t, db.pool, BASE);
  const linkIn = (raw: string, path: string) => {
    const match = new RegExp(`${BASE}${path}/([A-Za-z0-9_-]{43})`).exec(decodedBody(raw));
    if (!match) throw new Error(`no ${path} link in the mail`);
    return match[1]!;
  };

  await addresses.add(owner.id, 'confirmed@example.net');
  await addresses.add(owner.id, 'unconfirmed@example.net');
  await mails.drain();
  const confirmation = smtp.messages.find((m) => m.to === 'confirmed@example.net')!;
  await addresses.confirm(linkIn(confirmation.raw, '/email/confirm'));
  const idOf = async (address: string) =>
    (await addresses.list(owner.id)).find((a) => a.address === address)!.id;

  const subscribe = async (name: string, address: string) => {
    const created = await session('POST', '/api/subscriptions', {
      name,
      channel: 'email',
      emailAddressId: await idOf(address),
      filter: { catalog: 'open' },
    });
    t.equal(created.statusCode, 201, created.body);
    return (created.json() as { subscription: { id: string } }).subscription.id;
  };
  const confirmedSub = await subscribe('Open data by mail', 'confirmed@example.net');

  // Only a confirmed address of the owner's: not one still unconfirmed, not a made-up id, not
  // another account's; on creating, and on changing the address of one.
  const other = await createUser({ trustLevel: 3 });
  await addresses.add(other.id, 'other@example.net');
  await mails.drain();
  await addresses.confirm(
    linkIn(smtp.messages.find((m) => m.to === 'other@example.net')!.raw, '/email/confirm'),
  );
  const othersAddress = (await addresses.list(other.id))[0]!.id;
  for (const emailAddressId of [await idOf('unconfirmed@example.net'), 'addr_made_up', othersAddress]) {
    const refused = await session('POST', '/api/subscriptions', {
      name: 'Refused',
      channel: 'email',
      emailAddressId,
      filter: { catalog: 'open' },
    });
    t.equal(refused.statusCode, 400, refused.body);
    t.match(refused.json(), {
      message: /confirmed e-mail addresses/,
      details: 'field: emailAddressId',
    });
    const moved = await session('PATCH', `/api/subscriptions/${confirmedSub}`, { emailAddressId });
    t.equal(moved.statusCode, 400, moved.body);
  }
  t.equal((await session('GET', '/api/subscriptions')).json<{ docs: unknown[] }>().docs.length, 1);
  t.equal(
    (
      await session('PATCH', `/api/subscriptions/${confirmedSub}`, {
        emailAddressId: await idOf('confirmed@example.net'),
      })
    ).statusCode,
    200,
    'a confirmed address of the owner is accepted',
  );

  const deps = { ...deliveryDeps(db.pool), digests: createDigestSender({ store, enabled: true }) };
  const round = async () => {
    await changesVisible(db.pool);
    await matchStoredChanges(deps);
    return sendDueDeliveries(deps, 100);
  };
  const addEvent = (title: string) =>
    db.pool.query(sql.unsafe`
      insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      select id, catalog_id, ${title}, ${title}, '{}'::jsonb, st_setsrid(st_makepoint(13.4, 52.5), 4326),
             '2026-01-01'::timestamptz
      from datasets where slug = 'open-data'`);

  const before = smtp.messages.length;
  await addEvent('A <b>flood</b> downtown');
  await addEvent('Another event');
  t.equal(await round(), 1, 'one delivery for the batch');
  await mails.drain();
  const digests = smtp.messages.slice(before);
  t.same(
    digests.map((m) => m.to),
    ['confirmed@example.net'],
    'one digest, to the confirmed address only',
  );
  const digest = digests[0]!;
  const text = decodedBody(digest.raw);
  t.match(text, /Another event/, 'the digest lists the matched events');
  t.notMatch(htmlPart(digest.raw), /<b>flood<\/b>/, 'titles are escaped in the HTML part');
  t.ok(header(digest.raw, 'List-Unsubscribe'), 'with a one-click unsubscribe');

  const logOf = async (id: string) =>
    (
      (await session('GET', `/api/subscriptions/${id}/deliveries`)).json() as {
        docs: { error: string | null }[];
      }
    ).docs;
  t.equal((await logOf(confirmedSub))[0]?.error, null, 'the delivery to the confirmed address succeeded');

  // One-click unsubscribe from this subscription's mails: the next batch is not mailed.
  const unsubscribe = /<([^>]+)>/.exec(header(digest.raw, 'List-Unsubscribe') ?? '')?.[1] ?? '';
  await addresses.unsubscribe(unsubscribe.slice(-43));
  const afterUnsubscribe = smtp.messages.length;
  await addEvent('After unsubscribing');
  await round();
  await mails.drain();
  t.equal(smtp.messages.length, afterUnsubscribe, 'no digest after the one-click unsubscribe');
  t.match((await logOf(confirmedSub))[0]?.error, /not confirmed/, 'the log says the address left');
});

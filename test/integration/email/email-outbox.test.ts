import { randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { queueSourceHealthMails } from '../../../src/adapters/postgres/email/email-store.ts';
import { createDigestSender } from '../../../src/application/email/event-digest.ts';
import { type TestDatabase, testDatabase } from '../../helpers/database.ts';
import { decodedBody, emailOnLoopback, header, htmlPart } from './smtp-capture.ts';

// E-mail end to end against a real SMTP server on loopback: double opt-in by following the link of
// the captured mail, List-Unsubscribe headers (RFC 8058) and the one-click unsubscribe stopping the
// stream, the digest seam (escaped titles, unconfirmed addresses refused), and an SMTP server that
// refuses then accepts (the mail is retried, its error kept meanwhile).

const BASE = 'https://chronomap.example';

async function setup(t: Test) {
  const db = await testDatabase(t);
  const { smtp, store, addresses, sender } = await emailOnLoopback(t, db.pool, BASE);
  const userId = (await db.pool.oneFirst(sql.unsafe`
    insert into users (email, password_hash) values (${`${randomUUID()}@example.org`}, 'x') returning id`)) as number;
  return { db, smtp, store, addresses, sender, userId };
}

function link(raw: string, path: string): string {
  const match = new RegExp(`${BASE}${path}/([A-Za-z0-9_-]{43})`).exec(decodedBody(raw));
  if (!match) throw new Error(`no ${path} link in ${raw}`);
  return match[1]!;
}

async function confirmedAddress(s: Awaited<ReturnType<typeof setup>>, address: string): Promise<string> {
  await s.addresses.add(s.userId, address);
  await s.sender.drain();
  await s.smtp.waitFor(s.smtp.messages.length);
  const mail = s.smtp.messages.at(-1)!;
  await s.addresses.confirm(link(mail.raw, '/email/confirm'));
  return (await s.addresses.list(s.userId)).find((a) => a.address === address)!.id;
}

const outbox = async (db: TestDatabase) =>
  (await db.pool.any(sql.unsafe`
    select kind, status, attempts, last_error, payload from email_outbox order by id`)) as Array<{
    kind: string;
    status: string;
    attempts: number;
    last_error: string | null;
    payload: unknown;
  }>;

t.test(
  'double opt-in: the link in the mail confirms once; nothing goes to an unconfirmed address',
  async (t) => {
    const s = await setup(t);
    await s.addresses.add(s.userId, 'ada@example.net');
    t.same(
      (await s.addresses.list(s.userId)).map((a) => a.confirmed),
      [false],
    );
    const id = (await s.addresses.list(s.userId))[0]!.id;
    t.equal(
      await createDigestSender({ store: s.store, enabled: true }).sendEventDigest({
        ownerId: s.userId,
        emailAddressId: id,
        subscriptionId: 1,
        subscriptionName: 'x',
        events: [],
        moreCount: 0,
        manageUrl: BASE,
      }),
      'address-not-confirmed',
    );
    t.same(await s.sender.drain(), { sent: 1, failed: 0 });
    t.equal(s.smtp.messages.length, 1);
    const mail = s.smtp.messages[0]!;
    t.equal(mail.to, 'ada@example.net');
    t.equal(header(mail.raw, 'List-Unsubscribe'), undefined, 'a confirmation is no list mail');
    const token = link(mail.raw, '/email/confirm');
    const stored = await s.db.pool.oneFirst(
      sql.unsafe`select encode(confirm_token_hash, 'hex') from email_addresses`,
    );
    t.not(stored, token, 'the token is kept hashed');
    t.same(await s.addresses.confirm(token), { address: 'ada@example.net' });
    t.same(
      (await s.addresses.list(s.userId)).map((a) => [a.confirmed, a.lastMail?.status]),
      [[true, 'sent']],
    );
    await t.rejects(s.addresses.confirm(token), { kind: 'not_found', message: /./ }, 'single use');
    await t.rejects(s.addresses.confirm('not-a-token'), { kind: 'not_found', message: /./ });
    t.equal((await outbox(s.db))[0]!.payload, null, 'a sent mail keeps no token');
  },
);

t.test('confirmation tokens expire, and confirmation mails are rate-limited per account', async (t) => {
  const s = await setup(t);
  await s.addresses.add(s.userId, 'one@example.net');
  await s.sender.drain();
  await s.db.pool.query(
    sql.unsafe`update email_addresses set confirm_expires_at = now() - interval '1 second'`,
  );
  await t.rejects(s.addresses.confirm(link(s.smtp.messages[0]!.raw, '/email/confirm')), {
    kind: 'not_found',
    message: /./,
  });
  const id = (await s.addresses.list(s.userId))[0]!.id;
  for (let i = 0; i < 4; i += 1) await s.addresses.resend(s.userId, id);
  await t.rejects(s.addresses.resend(s.userId, id), { kind: 'rate_limited', message: /./ });
  await t.rejects(s.addresses.add(s.userId, 'two@example.net'), { kind: 'rate_limited', message: /./ });
  await t.rejects(s.addresses.add(s.userId, 'bad\r\nBcc: x@y.z'), { kind: 'validation', message: /./ });
  await t.rejects(s.addresses.resend(s.userId, 'nope'), { kind: 'not_found', message: /./ });
});

t.test('source-health alerts carry one-click unsubscribe; the POST stops the stream', async (t) => {
  const s = await setup(t);
  await confirmedAddress(s, 'ops@example.net');
  await s.db.pool.transaction((tx) =>
    queueSourceHealthMails(tx, s.userId, 'Scraper "<b>x</b>" has had 3 bad runs in a row.'),
  );
  await s.sender.drain();
  const mail = s.smtp.messages.at(-1)!;
  const unsubscribe = header(mail.raw, 'List-Unsubscribe')!;
  t.match(unsubscribe, /^<https:\/\/chronomap\.example\/email\/unsubscribe\/[A-Za-z0-9_-]{43}>$/);
  t.equal(header(mail.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  t.notMatch(htmlPart(mail.raw), /<b>x<\/b>/, 'the name is escaped in the HTML part');
  const token = unsubscribe.slice(-44, -1);
  t.same(await s.addresses.unsubscribeInfo(token), { address: 'ops@example.net', stream: 'source-health' });
  await s.addresses.unsubscribe(token);
  await s.addresses.unsubscribe(token); // a second POST is still a success
  const before = (await outbox(s.db)).length;
  await s.db.pool.transaction((tx) => queueSourceHealthMails(tx, s.userId, 'again'));
  t.equal((await outbox(s.db)).length, before, 'nothing queued after unsubscribing');
  await t.rejects(s.addresses.unsubscribe('A'.repeat(43)), { kind: 'not_found', message: /./ });
});

t.test(
  'a digest: hostile titles escaped, its own unsubscribe link stops only its subscription',
  async (t) => {
    const s = await setup(t);
    const id = await confirmedAddress(s, 'reader@example.net');
    const digests = createDigestSender({ store: s.store, enabled: true });
    const digest = (subscriptionId: number) =>
      digests.sendEventDigest({
        ownerId: s.userId,
        emailAddressId: id,
        subscriptionId,
        subscriptionName: 'Floods\r\nBcc: evil@example.com',
        events: [
          {
            id: '1',
            title: '<script>alert(1)</script>',
            timestamp: '2026-01-01T00:00:00Z',
            datasetTitle: 'D & D',
            url: 'javascript:alert(1)',
          },
          { id: '2', title: null, timestamp: null, datasetTitle: 'D', url: `${BASE}/events/2` },
        ],
        moreCount: 3,
        manageUrl: `${BASE}/account/subscriptions`,
      });
    t.equal(await digest(7), 'queued');
    await s.sender.drain();
    const mail = s.smtp.messages.at(-1)!;
    const body = htmlPart(mail.raw);
    t.notMatch(body, /<script>/);
    t.match(body, /&lt;script&gt;/);
    t.notMatch(body, /javascript:/);
    t.equal(header(mail.raw, 'Bcc'), undefined, 'the name adds no header');
    t.match(header(mail.raw, 'Subject')!, /5_new/);
    t.match(body, /and 3 more/);
    await s.addresses.unsubscribe(header(mail.raw, 'List-Unsubscribe')!.slice(-44, -1));
    t.equal(await digest(7), 'address-not-confirmed', 'the stopped subscription is not queued');
    t.equal(await digest(8), 'queued', 'another subscription still is');
    t.equal(
      await createDigestSender({ store: s.store, enabled: false }).sendEventDigest({
        ownerId: s.userId,
        emailAddressId: id,
        subscriptionId: 9,
        subscriptionName: 'x',
        events: [],
        moreCount: 0,
        manageUrl: BASE,
      }),
      'address-not-confirmed',
      'without SMTP nothing is queued',
    );
  },
);

t.test(
  'an SMTP server refusing then accepting: the mail is retried with its error kept, then sent',
  async (t) => {
    const s = await setup(t);
    s.smtp.refuse = 2;
    await s.addresses.add(s.userId, 'later@example.net');
    t.same(await s.sender.drain(), { sent: 0, failed: 1 });
    let [row] = await outbox(s.db);
    t.match(row, { status: 'queued', attempts: 1, last_error: /450/ });
    t.same(await s.sender.drain(), { sent: 0, failed: 0 }, 'not before its backoff');
    t.same((await s.addresses.list(s.userId))[0]!.lastMail, { status: 'queued', error: row!.last_error });
    const due = () => s.db.pool.query(sql.unsafe`update email_outbox set next_attempt_at = now()`);
    await due();
    t.same(await s.sender.drain(), { sent: 0, failed: 1 });
    await due();
    t.same(await s.sender.drain(), { sent: 1, failed: 0 });
    [row] = await outbox(s.db);
    t.match(row, { status: 'sent', attempts: 3, last_error: null });
    t.equal(s.smtp.messages.length, 1);
  },
);

t.test('attempts are bounded: a mail refused every time ends failed with the SMTP error', async (t) => {
  const s = await setup(t);
  s.smtp.refuse = 1000;
  await s.addresses.add(s.userId, 'never@example.net');
  for (let i = 0; i < 8; i += 1) {
    await s.sender.drain();
    await s.db.pool.query(sql.unsafe`update email_outbox set next_attempt_at = now()`);
  }
  const [row] = await outbox(s.db);
  t.match(row, { status: 'failed', attempts: 8, last_error: /450/, payload: null });
  t.same(await s.sender.drain(), { sent: 0, failed: 0 });
  t.match(await s.store.recentStatus(), { failed: 1, sent: 0 });
});

t.test('a sender whose lease was taken over records nothing: the newer claim’s outcome stands', async (t) => {
  const s = await setup(t);
  await s.addresses.add(s.userId, 'slow@example.net');
  const first = await s.store.claim(60_000);
  t.ok(first, 'claimed');
  // Its lease ended and another sender claimed the mail again (as claim does past the lease).
  await s.db.pool.query(sql.unsafe`update email_outbox set next_attempt_at = now() - interval '1 second'`);
  const second = await s.store.claim(60_000);
  t.equal(second?.id, first!.id, 'the same mail, claimed again');
  t.not(second?.lease, first!.lease, 'under a lease of its own');
  await s.store.sent(second!);
  // The first sender ends late with an SMTP failure: it cannot queue the sent mail again.
  await s.store.failed(first!, '451 too late', new Date());
  t.match(await outbox(s.db), [{ status: 'sent', attempts: 2, last_error: null }]);
  // Nor can a late success of a taken-over claim overwrite a retry the newer claim recorded.
  await s.addresses.add(s.userId, 'other@example.net');
  const third = await s.store.claim(60_000);
  await s.db.pool.query(
    sql.unsafe`update email_outbox set next_attempt_at = now() - interval '1 second' where id = ${third!.id}`,
  );
  const fourth = await s.store.claim(60_000);
  await s.store.failed(fourth!, '450 busy', new Date(Date.now() + 60_000));
  await s.store.sent(third!);
  t.match((await outbox(s.db))[1], { status: 'queued', last_error: '450 busy' });
});

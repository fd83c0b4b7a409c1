import { randomUUID } from 'node:crypto';
import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { testApp } from '../../helpers/app.ts';
import { emailOnLoopback, smtpCapture } from './smtp-capture.ts';

// /api/health reports the e-mail outbox as it is, against a real SMTP server on loopback: ok while
// mails go out, degraded while the server refuses every one and while a due mail waits too long,
// ok again once the server accepts; absent where SMTP_URL is not set.

t.test('the e-mail check follows the outbox: ok, refused, stuck, sent', async (t) => {
  const smtp = await smtpCapture();
  const { app, db } = await testApp(t, {
    config: { mail: { smtpUrl: smtp.url, from: 'chronomap@example.org' } },
  });
  const { addresses, sender } = await emailOnLoopback(t, db.pool, 'https://chronomap.example', smtp);
  const health = async () => {
    const response = await app.inject({ method: 'GET', url: '/api/health' });
    return {
      statusCode: response.statusCode,
      email: response.json<{ email?: Record<string, unknown> }>().email,
    };
  };
  t.same(await health(), {
    statusCode: 200,
    email: { status: 'ok', queued: 0, oldestQueuedSeconds: null, recentSent: 0, recentFailures: 0 },
  });

  const userId = (await db.pool.oneFirst(sql.unsafe`
    insert into users (email, password_hash) values (${`${randomUUID()}@example.org`}, 'x') returning id`)) as number;
  smtp.refuse = 1000;
  await addresses.add(userId, 'refused@example.net');
  t.same(await sender.drain(), { sent: 0, failed: 1 });
  const refused = await health();
  t.equal(refused.statusCode, 200, 'mail that does not go out is a warning, not an outage');
  t.match(refused.email, {
    status: 'degraded',
    message: /every send of the last hour failed/,
    queued: 1,
    recentSent: 0,
    recentFailures: 1,
  });

  // The retry came due twenty minutes ago and no worker took it.
  await db.pool.query(sql.unsafe`
    update email_outbox set next_attempt_at = now() - interval '20 minutes', created_at = now() - interval '25 minutes'`);
  const stuck = await health();
  t.match(stuck.email, { status: 'degraded', message: /due for 20 minutes/, queued: 1 });
  t.ok((stuck.email?.oldestQueuedSeconds as number) >= 25 * 60);

  smtp.refuse = 0;
  t.same(await sender.drain(), { sent: 1, failed: 0 });
  t.same(await health(), {
    statusCode: 200,
    email: { status: 'ok', queued: 0, oldestQueuedSeconds: null, recentSent: 1, recentFailures: 0 },
  });
});

t.test('without SMTP_URL the report has no e-mail check', async (t) => {
  const { app } = await testApp(t, { config: { mail: undefined } });
  const response = await app.inject({ method: 'GET', url: '/api/health' });
  t.equal(response.statusCode, 200);
  t.notOk('email' in response.json<object>());
});

import { sha256EmailTokens } from '../../../src/adapters/security/email-tokens.ts';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { createEmailStore } from '../../../src/adapters/postgres/email/email-store.ts';
import { createSmtpTransport } from '../../../src/adapters/smtp/mail-transport.ts';
import { createEmailAddresses } from '../../../src/application/email/email-addresses.ts';
import { createOutboxSender } from '../../../src/application/email/send-outbox.ts';
import { testDatabase } from '../../helpers/database.ts';
import { smtpCapture } from './smtp-capture.ts';

// kill -9 of the sending worker in the middle of an SMTP exchange (the server holds the DATA phase
// unanswered): the mail stays claimed in the outbox, and once its lease ends another worker sends
// it. Nothing is lost. The lease's end is brought forward in SQL rather than waited for.

const worker = path.join(path.dirname(fileURLToPath(import.meta.url)), 'send-worker.ts');

t.test('a sending worker SIGKILLed mid-send loses no mail', async (t) => {
  const db = await testDatabase(t);
  const smtp = await smtpCapture();
  t.teardown(() => smtp.close());
  const store = createEmailStore(db.pool);
  const userId = (await db.pool.oneFirst(sql.unsafe`
    insert into users (email, password_hash) values (${`${randomUUID()}@example.org`}, 'x') returning id`)) as number;
  await createEmailAddresses({ store, clock: systemClock, tokens: sha256EmailTokens, enabled: true }).add(
    userId,
    'kill@example.net',
  );

  let inData!: () => void;
  const dataStarted = new Promise<void>((resolve) => (inData = resolve));
  smtp.hold = () => {
    inData();
    return true;
  };
  const child = spawn(process.execPath, [worker, db.url, smtp.url], { stdio: 'inherit' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  await dataStarted;
  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL');
  t.equal(smtp.messages.length, 0, 'the server never accepted it');

  const claimed = await db.pool.one(sql.unsafe`
    select status, attempts, payload is not null as has_payload, next_attempt_at > now() as leased from email_outbox`);
  t.same(
    claimed,
    { status: 'sending', attempts: 1, has_payload: true, leased: true },
    'still in the outbox, leased',
  );

  smtp.hold = () => false;
  const transport = createSmtpTransport(smtp.url, 'chronomap@example.org');
  t.teardown(() => transport.close());
  const sender = createOutboxSender({
    store,
    transport,
    clock: systemClock,
    baseUrl: 'https://chronomap.example',
  });
  t.same(await sender.drain(), { sent: 0, failed: 0 }, 'not taken while the lease holds');
  await db.pool.query(sql.unsafe`update email_outbox set next_attempt_at = now()`);
  t.same(await sender.drain(), { sent: 1, failed: 0 });
  t.equal(smtp.messages.length, 1);
  t.equal(smtp.messages[0]!.to, 'kill@example.net');
  t.match(await db.pool.one(sql.unsafe`select status, attempts from email_outbox`), {
    status: 'sent',
    attempts: 2,
  });
});

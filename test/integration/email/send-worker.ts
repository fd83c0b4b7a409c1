import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import { createDatabasePool } from '../../../src/adapters/postgres/database.ts';
import { createEmailStore } from '../../../src/adapters/postgres/email/email-store.ts';
import { createSmtpTransport } from '../../../src/adapters/smtp/mail-transport.ts';
import { createOutboxSender } from '../../../src/application/email/send-outbox.ts';

// A sending worker in a process of its own, for email-kill.test.ts to SIGKILL mid-send:
// node send-worker.ts <database url> <smtp url>. Drains the outbox once.

const [databaseUrl, smtpUrl] = process.argv.slice(2) as [string, string];
const pool = await createDatabasePool(databaseUrl, { maximumPoolSize: 2 });
const transport = createSmtpTransport(smtpUrl, 'chronomap@example.org');
const sender = createOutboxSender({
  store: createEmailStore(pool),
  transport,
  clock: systemClock,
  baseUrl: 'https://chronomap.example',
});
await sender.drain();
transport.close();
await pool.end();

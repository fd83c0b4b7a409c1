import { SMTPServer } from 'smtp-server';
import type { Test } from 'tap';
import { systemClock } from '../../../src/adapters/clock/system-clock.ts';
import type { DatabasePool } from '../../../src/adapters/postgres/database.ts';
import { createEmailStore } from '../../../src/adapters/postgres/email/email-store.ts';
import { sha256EmailTokens } from '../../../src/adapters/security/email-tokens.ts';
import { createSmtpTransport } from '../../../src/adapters/smtp/mail-transport.ts';
import { createEmailAddresses } from '../../../src/application/email/email-addresses.ts';
import { createOutboxSender } from '../../../src/application/email/send-outbox.ts';

// A real SMTP server on loopback for the e-mail tests: it keeps every message it accepts (raw, with
// headers), and a test can make it refuse recipients for a while or hold a DATA phase open.

export type Captured = { to: string; raw: string };

export type SmtpCapture = {
  url: string;
  messages: Captured[];
  /** Recipients refused (550) while > 0; each refusal counts one down. */
  refuse: number;
  /** Called when a DATA phase starts; when it returns true the message is never answered. */
  hold: () => boolean;
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
};

export async function smtpCapture(): Promise<SmtpCapture> {
  const waiters: Array<() => void> = [];
  const capture: SmtpCapture = {
    url: '',
    messages: [],
    refuse: 0,
    hold: () => false,
    waitFor: (count) =>
      new Promise((resolve) => {
        const check = () => (capture.messages.length >= count ? resolve() : waiters.push(check));
        check();
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (capture.refuse > 0) {
        capture.refuse -= 1;
        const error = new Error('Mailbox unavailable, try later') as Error & { responseCode: number };
        error.responseCode = 450;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const held = capture.hold();
      const chunks: Buffer[] = [];
      stream.on('error', () => {});
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (held) return;
        capture.messages.push({
          to: session.envelope.rcptTo[0]?.address ?? '',
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        for (const waiter of waiters.splice(0)) waiter();
        callback();
      });
    },
  });
  // A client killed mid-exchange resets its connection: expected in the kill -9 test, not a failure.
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  capture.url = `smtp://127.0.0.1:${port}`;
  return capture;
}

/** A header of a raw message, unfolded. */
export function header(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(name.length + 1).trim();
}

/** The body decoded from quoted-printable (nodemailer's choice for these mails), soft breaks joined. */
export function decodedBody(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The text/html part of a multipart message, decoded (hostile input must be escaped there). */
export function htmlPart(raw: string): string {
  const decoded = decodedBody(raw);
  const start = decoded.indexOf('Content-Type: text/html');
  if (start < 0) throw new Error('no HTML part');
  return decoded.slice(start, decoded.indexOf('\n----', start));
}

/**
 * The e-mail feature on `pool` against a capturing SMTP server on loopback, as the composition root
 * builds it (store, addresses with the real token adapter, the outbox sender), closed with the test.
 */
export async function emailOnLoopback(
  t: Test,
  pool: DatabasePool,
  baseUrl: string,
  /** A capture started already (one the service under test was configured with). */
  started?: SmtpCapture,
) {
  const smtp = started ?? (await smtpCapture());
  const transport = createSmtpTransport(smtp.url, 'chronomap@example.org');
  t.teardown(async () => {
    transport.close();
    await smtp.close();
  });
  const store = createEmailStore(pool);
  const addresses = createEmailAddresses({
    store,
    clock: systemClock,
    tokens: sha256EmailTokens,
    enabled: true,
  });
  const sender = createOutboxSender({ store, transport, clock: systemClock, baseUrl });
  return { smtp, store, addresses, sender };
}

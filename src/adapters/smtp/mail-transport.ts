import nodemailer from 'nodemailer';
import type { MailTransport } from '../../ports/email/mail-transport.ts';

// nodemailer over SMTP_URL (smtp:// or smtps://, credentials in the URL). One transport per process
// (a connection per mail: the outbox sends few); a rejection carries the server's reply, which the
// outbox keeps as the mail's error.

/**
 * Every wait of an SMTP exchange bounded well under the outbox lease's minimum (EMAIL_LEASE_MS,
 * 2 minutes): nodemailer's defaults (2 min to connect, 10 min of socket silence) would let a stalled
 * server outlast the lease, and another worker would send the same mail again.
 */
const SMTP_TIMEOUTS = { connectionTimeout: 20_000, greetingTimeout: 20_000, socketTimeout: 60_000 };

export function createSmtpTransport(smtpUrl: string, from: string): MailTransport & { close(): void } {
  const transporter = nodemailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
  return {
    async send(mail) {
      await transporter.sendMail({ from, ...mail });
    },
    close() {
      transporter.close();
    },
  };
}

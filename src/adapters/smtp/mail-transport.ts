import nodemailer from 'nodemailer';
import type { MailTransport } from '../../ports/email/mail-transport.ts';

// nodemailer over SMTP_URL (smtp:// or smtps://, credentials in the URL). One pooled transport per
// process; a rejection carries the server's reply, which the outbox keeps as the mail's error.

export function createSmtpTransport(smtpUrl: string, from: string): MailTransport & { close(): void } {
  const transporter = nodemailer.createTransport(smtpUrl);
  return {
    async send(mail) {
      await transporter.sendMail({ from, ...mail });
    },
    close() {
      transporter.close();
    },
  };
}

/** Sends one mail (src/adapters/smtp/mail-transport.ts); rejects with the server's error. */
export interface MailTransport {
  send(mail: {
    to: string;
    subject: string;
    text: string;
    html: string;
    headers: Record<string, string>;
  }): Promise<void>;
}

import type { AddressInfo } from 'node:net';
import t from 'tap';
import { systemClock } from '../../src/adapters/clock/system-clock.ts';
import { createEmailStore } from '../../src/adapters/postgres/email/email-store.ts';
import { createSmtpTransport } from '../../src/adapters/smtp/mail-transport.ts';
import { createOutboxSender } from '../../src/application/email/send-outbox.ts';
import { accountsApp } from '../helpers/accounts.ts';
import { launchChromium, screenshots } from '../helpers/browser.ts';
import { decodedBody, smtpCapture } from '../integration/email/smtp-capture.ts';

// The "E-mail addresses" account page in Debian's Chromium, with a real SMTP server on loopback:
// add an address, follow the link of the captured confirmation mail, see it confirmed. With
// CHRONOMAP_SCREENSHOTS=1 the run also refreshes docs/screenshots/email.png.

t.test('an address is added on /account/email and confirmed from the mail', async (t) => {
  const smtp = await smtpCapture();
  t.teardown(() => smtp.close());
  const { app, db, createUser } = await accountsApp(t, {
    config: { mail: { smtpUrl: smtp.url, from: 'chronomap@example.org' } },
  });
  const user = await createUser();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const transport = createSmtpTransport(smtp.url, 'chronomap@example.org');
  t.teardown(() => transport.close());
  // The worker process's part, run here: send what the page queued.
  const sender = createOutboxSender({
    store: createEmailStore(db.pool),
    transport,
    clock: systemClock,
    baseUrl: base,
  });

  const browser = await launchChromium(t);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${base}/account/email`);
  await page.fill('input[name=email]', user.email);
  await page.fill('input[name=password]', user.password);
  await page.click('button[type=submit]');
  t.equal(new URL(page.url()).pathname, '/account/email', 'the login comes back to the page');
  t.ok(await page.isVisible('#email-none'), 'no addresses yet');

  await page.fill('#email-add input[name=address]', 'ada@example.net');
  await page.click('#email-add-submit');
  t.match(await page.textContent('.flash.ok'), /follow the link/);
  t.match(await page.textContent('#email-addresses tbody tr'), /awaiting confirmation/);

  t.same(await sender.drain(), { sent: 1, failed: 0 });
  const link = /http:\/\/127\.0\.0\.1:\d+\/email\/confirm\/[A-Za-z0-9_-]{43}/.exec(
    decodedBody(smtp.messages[0]!.raw),
  );
  t.ok(link, 'the mail holds the confirmation link');
  await page.goto(link![0]);
  t.match(await page.textContent('#email-confirmed'), /ada@example\.net/);
  await page.goto(`${base}/account/email`);
  t.match(await page.textContent('#email-addresses tbody tr'), /confirmed · last mail\s+sent/);
  await screenshots(t, page)('email');
});

import t from 'tap';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { sha256EmailTokens } from '../../../src/adapters/security/email-tokens.ts';
import { accountsApp } from '../../helpers/accounts.ts';

// The public token routes over HTTP: the RFC 8058 one-click POST works with no session, no cookie
// and no CSRF token, in either body encoding a mail client may use; the GET only shows a button;
// unknown tokens are 404. Without SMTP_URL the account page says e-mail is off.

t.test('one-click unsubscribe over HTTP, and the page without SMTP', async (t) => {
  const { app, db, createUser, login } = await accountsApp(t, {
    config: { mail: { smtpUrl: 'smtp://127.0.0.1:9', from: 'chronomap@example.org' } },
  });
  const user = await createUser();
  const addressId = (await db.pool.oneFirst(sql.unsafe`
    insert into email_addresses (user_id, address, confirmed_at) values (${user.id}, 'a@example.net', now())
    returning id::text`)) as string;
  const tokens = [sha256EmailTokens.issue(), sha256EmailTokens.issue()];
  for (const { hash } of tokens)
    await db.pool.query(sql.unsafe`
      insert into email_unsubscribe_tokens (token_hash, email_address_id, stream)
      values (${sql.binary(hash)}, ${addressId}, 'source-health')`);
  const suppressed = () => db.pool.oneFirst(sql.unsafe`select count(*)::int from email_suppressions`);

  const shown = await app.inject({ method: 'GET', url: `/email/unsubscribe/${tokens[0]!.token}` });
  t.equal(shown.statusCode, 200);
  t.match(shown.body, /source-health alerts to a@example\.net/);
  t.equal(await suppressed(), 0, 'a GET unsubscribes no one');

  const form = await app.inject({
    method: 'POST',
    url: `/email/unsubscribe/${tokens[0]!.token}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
  t.equal(form.statusCode, 200);
  t.equal(await suppressed(), 1);
  const boundary = 'xyz';
  const multipart = await app.inject({
    method: 'POST',
    url: `/email/unsubscribe/${tokens[1]!.token}`,
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`,
  });
  t.equal(multipart.statusCode, 200, 'multipart bodies too');
  const unknown = await app.inject({
    method: 'POST',
    url: `/email/unsubscribe/${'B'.repeat(43)}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'List-Unsubscribe=One-Click',
  });
  t.equal(unknown.statusCode, 404);
  t.equal((await app.inject({ method: 'GET', url: '/email/confirm/short' })).statusCode, 404);

  const page = await app.inject({
    method: 'GET',
    url: '/account/email',
    headers: { authorization: `Bearer ${await login(user)}` },
  });
  t.equal(page.statusCode, 200);
  t.match(page.body, /a@example\.net/);
});

t.test('without SMTP_URL the account page says e-mail is off', async (t) => {
  const { app, createUser, login } = await accountsApp(t);
  const user = await createUser();
  const page = await app.inject({
    method: 'GET',
    url: '/account/email',
    headers: { authorization: `Bearer ${await login(user)}` },
  });
  t.equal(page.statusCode, 200);
  t.match(page.body, /id="email-disabled"/);
  t.notMatch(page.body, /id="email-add"/);
});

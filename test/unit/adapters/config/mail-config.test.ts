import t from 'tap';
import { ConfigError, loadConfig } from '../../../../src/adapters/config/environment.ts';

// SMTP_URL and MAIL_FROM: unset is e-mail off; a URL of another scheme or a malformed sender stops
// the start with the variable named.

t.test('e-mail is off without SMTP_URL, on with it', async (t) => {
  t.equal(loadConfig({ NODE_ENV: 'test' }).mail, undefined);
  t.same(loadConfig({ NODE_ENV: 'test', SMTP_URL: 'smtp://user:pw@mail.example.org:587' }).mail, {
    smtpUrl: 'smtp://user:pw@mail.example.org:587',
    from: 'chronomap@mail.example.org',
  });
  t.same(
    loadConfig({ NODE_ENV: 'test', SMTP_URL: 'smtps://mail.example.org', MAIL_FROM: 'alerts@example.org' })
      .mail,
    { smtpUrl: 'smtps://mail.example.org', from: 'alerts@example.org' },
  );
});

t.test('a bad SMTP_URL or MAIL_FROM is named', async (t) => {
  t.throws(() => loadConfig({ NODE_ENV: 'test', SMTP_URL: 'http://mail.example.org' }), ConfigError);
  t.throws(() => loadConfig({ NODE_ENV: 'test', SMTP_URL: 'smtp://m.example.org', MAIL_FROM: 'a b' }), {
    message: /MAIL_FROM/,
  });
});

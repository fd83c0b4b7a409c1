import t from 'tap';
import { REGISTRATION_MESSAGE } from '../../../src/application/accounts/register-account.ts';
import { ingestApp, signIn } from '../../fixtures/ingest/client.ts';

// The registration page's answers without a browser: no notices box when an admin set none, bad
// input refused in words with the status of the API, a taken address answered word for word as the
// API does (no session), a new account logged in on its way to the wizard, and a closed
// registration refused.

t.test('the registration page answers as the registration API does', async (t) => {
  const { app, db, user } = await ingestApp(t);
  const admin = await signIn(app, db.pool, { role: 'admin' });

  const form = await app.inject({ method: 'GET', url: '/account/register' });
  t.equal(form.statusCode, 200);
  t.notMatch(form.body, /legal-notices/, 'no notices box when none is set');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const cookie = String(form.headers['set-cookie']).split(';')[0] ?? '';
  const post = (fields: Record<string, string>) =>
    app.inject({
      method: 'POST',
      url: '/account/register',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });

  const badEmail = await post({ email: 'not-an-address', password: 'a long enough password' });
  t.equal(badEmail.statusCode, 400);
  t.match(badEmail.body, /is not an email address/);
  t.match(badEmail.body, /value="not-an-address"/, 'the e-mail is kept');

  const weak = await post({ email: 'weak@example.org', password: 'short' });
  t.equal(weak.statusCode, 400);
  t.match(weak.body, /at least 10 characters/);

  const taken = await post({ email: user.email, password: 'not the owner’s password' });
  t.equal(taken.statusCode, 200);
  t.match(taken.body, REGISTRATION_MESSAGE, "the API's answer");
  t.notOk(String(taken.headers['set-cookie'] ?? '').includes('payload-token='), 'and no session');

  const fresh = await post({ email: `fresh-${process.pid}@example.org`, password: 'a long enough password' });
  t.equal(fresh.statusCode, 303);
  t.match(fresh.headers.location, /^\/account\/imports\/new\?notice=/, 'on to the wizard');
  t.match(String(fresh.headers['set-cookie']), /payload-token=/, 'logged in');

  const closed = await app.inject({
    method: 'PATCH',
    url: '/api/feature-flags',
    headers: { authorization: `Bearer ${admin.token}` },
    payload: { enableRegistration: false },
  });
  t.equal(closed.statusCode, 200, 'registration closed');
  const refused = await post({
    email: `late-${process.pid}@example.org`,
    password: 'a long enough password',
  });
  t.equal(refused.statusCode, 403);
  t.match(refused.body, /Registration is closed/);
});

import t from 'tap';
import { postgresFeatureFlagStore } from '../../../src/adapters/postgres/site/feature-flag-store.ts';
import { isFeatureEnabled } from '../../../src/application/site/feature-flags.ts';
import { accountsApp } from '../../helpers/accounts.ts';

t.test('feature flags: public to read, admins change them', async (t) => {
  const { db, createUser, login, as } = await accountsApp(t);
  const anonymous = as(null);
  const initial = await anonymous('GET', '/api/feature-flags');
  t.equal(initial.statusCode, 200);
  t.same(initial.json(), { enableScrapers: false, enableRegistration: true }, 'scrapers are off by default');

  t.equal((await anonymous('PATCH', '/api/feature-flags', { enableScrapers: true })).statusCode, 401);
  // USER_ONLY: an anonymous caller learns nothing from the body's validation either.
  t.equal((await anonymous('PATCH', '/api/feature-flags', { nonsense: 1 })).statusCode, 401);
  const user = as(await login(await createUser({ trustLevel: 5 })));
  const refused = await user('PATCH', '/api/feature-flags', { enableScrapers: true });
  t.equal(refused.statusCode, 403, 'level 5 is not an admin');
  t.equal(refused.json().code, 'ADMIN_ONLY');

  const admin = as(await login(await createUser({ role: 'admin' })));
  const changed = await admin('PATCH', '/api/feature-flags', { enableScrapers: true });
  t.equal(changed.statusCode, 200);
  t.same(changed.json(), { enableScrapers: true, enableRegistration: true });
  t.same((await anonymous('GET', '/api/feature-flags')).json().enableScrapers, true);
  t.equal(
    await isFeatureEnabled(postgresFeatureFlagStore(db.pool), 'enableScrapers'),
    true,
    'other areas read it too',
  );

  t.equal((await admin('PATCH', '/api/feature-flags', { enableTeleport: true })).statusCode, 400);
  t.equal((await admin('PATCH', '/api/feature-flags', { enableScrapers: 'yes' })).statusCode, 400);
  t.equal((await admin('PATCH', '/api/feature-flags', {})).statusCode, 400);

  t.test('closing registration', async (t) => {
    await admin('PATCH', '/api/feature-flags', { enableRegistration: false });
    const response = await anonymous('POST', '/api/auth/register', {
      email: 'a@example.org',
      password: 'long enough password',
    });
    t.equal(response.statusCode, 403);
    t.equal(response.json().code, 'REGISTRATION_CLOSED');
  });
});

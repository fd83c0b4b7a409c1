import t from 'tap';
import { createAdmin } from '../../../../src/application/accounts/create-admin.ts';
import { accountUseCaseDeps, anAccount, PASSWORD } from './account-use-case-fakes.ts';

// Creating an administrator on the shared in-memory fakes: a new admin at level 5, or an existing
// account promoted with a new password and logged out everywhere.

const NEW_PASSWORD = 'a brand new admin password';
const HOUR = 60 * 60 * 1000;

t.test('a new address becomes an admin at trust level 5', async (t) => {
  const deps = accountUseCaseDeps();
  const admin = await createAdmin(deps, { email: ' root@example.org ', password: NEW_PASSWORD });
  t.match(admin, { email: 'root@example.org', role: 'admin', trustLevel: 5, created: true });
  const stored = await deps.users.findById(admin.id);
  t.equal(await deps.passwords.verify(NEW_PASSWORD, stored?.passwordHash ?? ''), true);
});

t.test('an existing account is promoted, gets the new password, and every session of it ends', async (t) => {
  const deps = accountUseCaseDeps();
  const id = await anAccount(deps, 'alice@example.org');
  const expires = new Date(deps.clock.now().getTime() + HOUR);
  const sessions = [
    await deps.sessions.create(id, expires, deps.clock.now()),
    await deps.sessions.create(id, expires, deps.clock.now()),
  ];
  const admin = await createAdmin(deps, { email: 'ALICE@example.org', password: NEW_PASSWORD });
  t.match(admin, { id, role: 'admin', trustLevel: 5, created: false });
  const stored = await deps.users.findById(id);
  t.equal(await deps.passwords.verify(NEW_PASSWORD, stored?.passwordHash ?? ''), true);
  t.equal(
    await deps.passwords.verify(PASSWORD, stored?.passwordHash ?? ''),
    false,
    'the old password is gone',
  );
  for (const session of sessions) t.equal(await deps.sessions.findUser(session.id), null);
});

t.test('a weak password or a malformed address makes no admin', async (t) => {
  const deps = accountUseCaseDeps();
  await t.rejects(createAdmin(deps, { email: 'root@example.org', password: 'short' }), {
    name: 'ValidationError',
    field: 'password',
  });
  await t.rejects(createAdmin(deps, { email: 'root', password: NEW_PASSWORD }), {
    name: 'ValidationError',
    field: 'email',
  });
  t.equal(await deps.users.findByEmail('root@example.org'), null);
});

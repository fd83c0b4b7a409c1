import t from 'tap';
import {
  REGISTRATION_MESSAGE,
  registerAccount,
} from '../../../../src/application/accounts/register-account.ts';
import { accountUseCaseDeps, anAccount, PASSWORD } from './account-use-case-fakes.ts';

// Registering an account on the shared in-memory fakes: a basic account at the default trust level,
// the same answer (and the same work) for a taken address, and the rules on address and password.

const registration = (deps: ReturnType<typeof accountUseCaseDeps>, registrationOpen = true) => ({
  users: deps.users,
  passwords: deps.passwords,
  defaultTrustLevel: deps.policy.defaultTrustLevel,
  registrationOpen,
});

t.test('a new address gets a user account at the default trust level', async (t) => {
  const deps = accountUseCaseDeps();
  t.same(await registerAccount(registration(deps), { email: ' New@Example.org ', password: PASSWORD }), {
    message: REGISTRATION_MESSAGE,
  });
  const user = await deps.users.findByEmail('new@example.org');
  t.match(user, { email: 'New@Example.org', role: 'user', trustLevel: deps.policy.defaultTrustLevel });
  t.equal(
    await deps.passwords.verify(PASSWORD, user?.passwordHash ?? ''),
    true,
    'the password is stored hashed',
  );
});

t.test('a taken address gets the same answer and the same work, and its account is untouched', async (t) => {
  const deps = accountUseCaseDeps();
  const id = await anAccount(deps, 'alice@example.org', { role: 'admin', trustLevel: 5 });
  const before = await deps.users.findById(id);
  const hashed = deps.passwords.hashed;
  t.same(
    await registerAccount(registration(deps), { email: 'ALICE@example.org', password: 'another password' }),
    {
      message: REGISTRATION_MESSAGE,
    },
  );
  t.equal(deps.passwords.hashed, hashed + 1, 'one hash, as for a new address');
  t.same(await deps.users.findById(id), before);
});

t.test('closed registration, a malformed address and a short password are refused', async (t) => {
  const deps = accountUseCaseDeps();
  await t.rejects(
    registerAccount(registration(deps, false), { email: 'a@example.org', password: PASSWORD }),
    {
      name: 'ForbiddenError',
      code: 'REGISTRATION_CLOSED',
    },
  );
  await t.rejects(registerAccount(registration(deps), { email: 'not an address', password: PASSWORD }), {
    name: 'ValidationError',
    field: 'email',
  });
  await t.rejects(registerAccount(registration(deps), { email: 'a@example.org', password: 'short' }), {
    name: 'ValidationError',
    field: 'password',
  });
  t.equal(await deps.users.findByEmail('a@example.org'), null, 'no account was made');
  t.equal(deps.passwords.hashed, 0, 'nor any hash');
});

import t from 'tap';
import {
  changeEmail,
  changePassword,
  deleteAccount,
  summariseAccountDeletion,
} from '../../../../src/application/accounts/manage-account.ts';
import { accountUseCaseDeps, anAccount, PASSWORD, perMinute } from './account-use-case-fakes.ts';

// Changes users make to their own accounts, on the shared in-memory fakes: each asks for the
// current password, is throttled per account and per address, and ends the sessions it should.

const HOME = '192.0.2.1';
const NEW_PASSWORD = 'a new and longer password';
const WRONG = { name: 'UnauthorizedError', code: 'INVALID_CREDENTIALS' };
const THROTTLED = { name: 'RateLimitedError', kind: 'rate_limited' };

async function signedIn(deps = accountUseCaseDeps(), email = 'alice@example.org') {
  const userId = await anAccount(deps, email);
  const expires = new Date(deps.clock.now().getTime() + 3_600_000);
  const here = await deps.sessions.create(userId, expires, deps.clock.now());
  const elsewhere = await deps.sessions.create(userId, expires, deps.clock.now());
  const hashOf = async () => (await deps.users.findById(userId))?.passwordHash ?? '';
  return { deps, userId, here: here.id, elsewhere: elsewhere.id, hashOf, clientIp: HOME };
}

t.test('a new password ends every other session', async (t) => {
  const { deps, userId, here, elsewhere, hashOf } = await signedIn();
  const changed = await changePassword(deps, {
    userId,
    clientIp: HOME,
    sessionId: here,
    currentPassword: PASSWORD,
    newPassword: NEW_PASSWORD,
  });
  t.same(changed, { revokedSessions: 1 });
  t.equal(await deps.passwords.verify(NEW_PASSWORD, await hashOf()), true);
  t.match(await deps.sessions.findUser(here), { id: userId }, 'this session goes on');
  t.equal(await deps.sessions.findUser(elsewhere), null);
});

t.test('a wrong current password or a weak new one changes nothing', async (t) => {
  const { deps, userId, here, elsewhere, hashOf } = await signedIn();
  const before = await hashOf();
  const input = {
    userId,
    clientIp: HOME,
    sessionId: here,
    currentPassword: PASSWORD,
    newPassword: NEW_PASSWORD,
  };
  await t.rejects(changePassword(deps, { ...input, currentPassword: 'not my password' }), WRONG);
  await t.rejects(changePassword(deps, { ...input, newPassword: 'short' }), {
    name: 'ValidationError',
    field: 'password',
  });
  t.equal(await hashOf(), before);
  t.match(await deps.sessions.findUser(elsewhere), { id: userId }, 'no session ended');
});

t.test('confirmations are throttled per account, whatever the address, and per address', async (t) => {
  const deps = accountUseCaseDeps((policy) => ({
    ...policy,
    passwordConfirmations: { perAccount: perMinute(2), perIp: perMinute(3) },
  }));
  const alice = await signedIn(deps);
  const others = [];
  for (const name of ['bob', 'carol', 'dave']) others.push(await signedIn(deps, `${name}@example.org`));
  const confirm = (who: typeof alice, clientIp: string, password = 'not my password') =>
    changeEmail(deps, { userId: who.userId, clientIp, password, newEmail: 'new@example.org' });
  await t.rejects(confirm(alice, HOME), WRONG);
  await t.rejects(confirm(alice, '198.51.100.7'), WRONG);
  await t.rejects(
    confirm(alice, '203.0.113.9', PASSWORD),
    THROTTLED,
    "the account's third waits, from anywhere",
  );
  const [bob, carol, dave] = others as [typeof alice, typeof alice, typeof alice];
  await t.rejects(confirm(bob, HOME), WRONG);
  await t.rejects(confirm(carol, HOME), WRONG);
  await t.rejects(
    confirm(dave, HOME, PASSWORD),
    THROTTLED,
    "the address's fourth waits, whatever the account",
  );
  t.match(await deps.users.findById(dave.userId), { email: 'dave@example.org' });
  deps.clock.advance(60_000);
  await confirm(alice, HOME, PASSWORD);
  t.match(
    await deps.users.findById(alice.userId),
    { email: 'new@example.org' },
    'a minute later it goes through',
  );
});

t.test('a free address is taken; a taken one gets the same answer and changes nothing', async (t) => {
  const { deps, userId } = await signedIn();
  const bob = await anAccount(deps, 'bob@example.org');
  await changeEmail(deps, { userId, clientIp: HOME, password: PASSWORD, newEmail: ' Alice@New.example ' });
  t.match(await deps.users.findById(userId), { email: 'Alice@New.example' });
  t.equal(
    await changeEmail(deps, { userId, clientIp: HOME, password: PASSWORD, newEmail: 'BOB@example.org' }),
    undefined,
  );
  t.match(await deps.users.findById(userId), { email: 'Alice@New.example' });
  t.match(await deps.users.findById(bob), { email: 'bob@example.org' });
  await t.rejects(changeEmail(deps, { userId, clientIp: HOME, password: PASSWORD, newEmail: 'nope' }), {
    name: 'ValidationError',
    field: 'email',
  });
});

t.test('deleting the account says what goes, asks for the password, and ends its sessions', async (t) => {
  const { deps, userId, here, elsewhere } = await signedIn();
  const summary = { catalogs: 0, datasets: 0, events: 0, sessions: 2 };
  t.same(await summariseAccountDeletion(deps, userId), summary);
  await t.rejects(deleteAccount(deps, { userId, clientIp: HOME, password: 'not my password' }), WRONG);
  t.ok(await deps.users.findById(userId), 'still there');
  t.same(await deleteAccount(deps, { userId, clientIp: HOME, password: PASSWORD }), summary);
  t.equal(await deps.users.findById(userId), null);
  t.equal(await deps.sessions.findUser(here), null);
  t.equal(await deps.sessions.findUser(elsewhere), null);
  await t.rejects(deleteAccount(deps, { userId, clientIp: HOME, password: PASSWORD }), {
    name: 'UnauthorizedError',
    code: 'ACCOUNT_DELETED',
  });
});

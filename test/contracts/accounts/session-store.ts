import { randomUUID } from 'node:crypto';
import type { Test } from 'tap';
import { addUser, hoursFromNow, type MakeAccounts } from './accounts-harness.ts';

// What every SessionStore does, as one suite: run against the in-memory fake
// (test/unit/fakes/accounts/session-store.test.ts) and against postgresSessionStore
// (test/integration/accounts/session-store-contract.test.ts). Expiry is decided by the store's own
// clock (the database's now()), so the suite's sessions expire hours away from now, either way.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function sessionStoreContract(t: Test, make: MakeAccounts): void {
  t.test('a new session is live: it names its user and when the login happened', async (t) => {
    const { users, sessions } = await make();
    const { id, email } = await addUser(users);
    const expiresAt = hoursFromNow(2);
    const loggedInAt = new Date(Date.now() - 1234);
    const session = await sessions.create(id, expiresAt, loggedInAt);
    t.match(session, { id: UUID, userId: id, expiresAt, loggedInAt });
    t.same(
      await sessions.findUser(session.id),
      { id, email, role: 'user', trustLevel: 1 },
      'no password hash',
    );
    t.same(await sessions.loggedInAt(session.id), loggedInAt, 'to the millisecond');
    const other = await sessions.create(id, expiresAt, loggedInAt);
    t.not(other.id, session.id, 'each session has its own id');
  });

  t.test('the user a session names is the account as it is now', async (t) => {
    const { users, sessions } = await make();
    const { id, email } = await addUser(users);
    const session = await sessions.create(id, hoursFromNow(1), new Date());
    await users.upsert({ email, passwordHash: 'h', role: 'admin', trustLevel: 4 });
    t.match(await sessions.findUser(session.id), { id, role: 'admin', trustLevel: 4 });
  });

  t.test('an expired, revoked or unknown session is no session', async (t) => {
    const { users, sessions } = await make();
    const { id } = await addUser(users);
    const expired = await sessions.create(id, hoursFromNow(-1), hoursFromNow(-3));
    t.equal(await sessions.findUser(expired.id), null);
    t.equal(await sessions.loggedInAt(expired.id), null);
    const revoked = await sessions.create(id, hoursFromNow(1), new Date());
    await sessions.revoke(revoked.id);
    await sessions.revoke(revoked.id);
    t.equal(await sessions.findUser(revoked.id), null);
    t.equal(await sessions.loggedInAt(revoked.id), null);
    const unknown = randomUUID();
    await sessions.revoke(unknown);
    t.equal(await sessions.findUser(unknown), null);
    t.equal(await sessions.loggedInAt(unknown), null);
  });

  t.test("revokeAllForUser ends the user's unrevoked sessions but the one kept", async (t) => {
    const { users, sessions } = await make();
    const { id } = await addUser(users);
    const other = await addUser(users, 'other');
    const kept = await sessions.create(id, hoursFromNow(1), new Date());
    const ended = await sessions.create(id, hoursFromNow(1), new Date());
    await sessions.create(id, hoursFromNow(-1), hoursFromNow(-2));
    await sessions.revoke((await sessions.create(id, hoursFromNow(1), new Date())).id);
    const others = await sessions.create(other.id, hoursFromNow(1), new Date());
    t.equal(
      await sessions.revokeAllForUser(id, kept.id),
      2,
      'the live one and the expired one, not the revoked',
    );
    t.match(await sessions.findUser(kept.id), { id });
    t.equal(await sessions.findUser(ended.id), null);
    t.match(await sessions.findUser(others.id), { id: other.id });
    t.equal(await sessions.revokeAllForUser(id), 1, 'without one to keep: the last one');
    t.equal(await sessions.findUser(kept.id), null);
    t.equal(await sessions.revokeAllForUser(id), 0);
  });
}

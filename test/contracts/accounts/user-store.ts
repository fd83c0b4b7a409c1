import type { Test } from 'tap';
import { addUser, freshEmail, hoursFromNow, type MakeAccounts } from './accounts-harness.ts';

// What every UserStore (and the ActorDirectory reading the same accounts) does, as one suite: run
// against the in-memory fake (test/unit/fakes/accounts/user-store.test.ts) and against
// postgresUserStore (test/integration/accounts/user-store-contract.test.ts).

export function userStoreContract(t: Test, make: MakeAccounts): void {
  t.test('upsert creates an account, then updates the one with that address in any case', async (t) => {
    const { users } = await make();
    const email = freshEmail('Upsert');
    const created = await users.upsert({ email, passwordHash: 'h1', role: 'user', trustLevel: 1 });
    t.match(created, { email, role: 'user', trustLevel: 1, created: true });
    const updated = await users.upsert({
      email: email.toUpperCase(),
      passwordHash: 'h2',
      role: 'admin',
      trustLevel: 5,
    });
    t.same(
      updated,
      { id: created.id, email, role: 'admin', trustLevel: 5, created: false },
      'the stored spelling stays',
    );
    t.same(await users.findById(created.id), {
      id: created.id,
      email,
      role: 'admin',
      trustLevel: 5,
      passwordHash: 'h2',
    });
  });

  t.test('createIfAbsent makes a user account once per address, whatever its case', async (t) => {
    const { users } = await make();
    const email = freshEmail('absent');
    t.equal(await users.createIfAbsent({ email, passwordHash: 'first', trustLevel: 2 }), true);
    t.equal(
      await users.createIfAbsent({ email: email.toUpperCase(), passwordHash: 'second', trustLevel: 4 }),
      false,
    );
    t.match(
      await users.findByEmail(email),
      { email, role: 'user', trustLevel: 2, passwordHash: 'first' },
      'the first stays as it was',
    );
  });

  t.test('accounts are found by id and by address in any case; others are not', async (t) => {
    const { users } = await make();
    const { id, email } = await addUser(users);
    t.same(await users.findByEmail(email.toUpperCase()), await users.findById(id));
    t.match(await users.findById(id), { id, email, passwordHash: 'hash-1' });
    t.equal(await users.findByEmail(freshEmail('nobody')), null);
    t.equal(await users.findById(2_000_000_000), null);
  });

  t.test('setPassword replaces the hash', async (t) => {
    const { users } = await make();
    const { id } = await addUser(users);
    await users.setPassword(id, 'hash-2');
    t.match(await users.findById(id), { passwordHash: 'hash-2' });
  });

  t.test("setEmail takes a free address, refuses another account's, and may recase its own", async (t) => {
    const { users } = await make();
    const me = await addUser(users, 'me');
    const other = await addUser(users, 'other');
    const free = freshEmail('new');
    t.equal(await users.setEmail(me.id, free), true);
    t.match(await users.findByEmail(free), { id: me.id, email: free });
    t.equal(await users.findByEmail(me.email), null, 'the old address is free');
    t.equal(await users.setEmail(me.id, other.email.toUpperCase()), false);
    t.match(await users.findById(me.id), { email: free }, 'unchanged');
    t.equal(await users.setEmail(me.id, free.toUpperCase()), true);
    t.match(await users.findById(me.id), { email: free.toUpperCase() });
  });

  t.test('deleting an account says what went and ends its sessions', async (t) => {
    const { users, sessions } = await make();
    const { id, email } = await addUser(users);
    const other = await addUser(users, 'other');
    const live = await sessions.create(id, hoursFromNow(1), new Date());
    await sessions.create(id, hoursFromNow(1), new Date());
    await sessions.revoke((await sessions.create(id, hoursFromNow(1), new Date())).id);
    await sessions.create(id, hoursFromNow(-1), hoursFromNow(-2));
    const kept = await sessions.create(other.id, hoursFromNow(1), new Date());
    const summary = { catalogs: 0, datasets: 0, events: 0, sessions: 2 };
    t.same(await users.deletionSummary(id), summary, 'live sessions only; nothing owned yet');
    t.same(await users.delete(id), summary);
    t.equal(await users.findById(id), null);
    t.equal(await users.findByEmail(email), null);
    t.equal(await sessions.findUser(live.id), null);
    t.equal(await sessions.revokeAllForUser(id), 0, 'no session of it is left');
    t.match(await sessions.findUser(kept.id), { id: other.id }, "another account's session lives on");
    t.equal(
      await users.createIfAbsent({ email, passwordHash: 'h', trustLevel: 1 }),
      true,
      'the address is free again',
    );
  });

  t.test('the actor directory reads role and trust level', async (t) => {
    const { users, actors } = await make();
    const admin = await users.upsert({
      email: freshEmail('admin'),
      passwordHash: 'h',
      role: 'admin',
      trustLevel: 5,
    });
    t.same(await actors.find(admin.id), { id: admin.id, role: 'admin', trustLevel: 5 });
    await users.upsert({ email: admin.email, passwordHash: 'h', role: 'user', trustLevel: 0 });
    t.same(await actors.find(admin.id), { id: admin.id, role: 'user', trustLevel: 0 }, 'as it is now');
    t.equal(await actors.find(2_000_000_000), null);
  });
}

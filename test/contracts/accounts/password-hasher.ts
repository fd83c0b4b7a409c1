import type { Test } from 'tap';
import type { PasswordHasher } from '../../../src/ports/accounts/password-hasher.ts';

// What every PasswordHasher does, as one suite: run against scryptPasswordHasher
// (test/unit/adapters/security/password-hasher-contract.test.ts) and against the fast fake the
// use-case tests use (test/unit/fakes/accounts/password-hasher.test.ts).

const PASSWORD = 'correct horse battery staple';

export function passwordHasherContract(t: Test, make: () => PasswordHasher): void {
  t.test('the hash verifies its password and no other', async (t) => {
    const hasher = make();
    const stored = await hasher.hash(PASSWORD);
    t.notOk(stored.includes(PASSWORD), 'the password is not in the record');
    t.equal(await hasher.verify(PASSWORD, stored), true);
    t.equal(await hasher.verify(`${PASSWORD} `, stored), false);
    t.equal(await hasher.verify('', stored), false);
  });

  t.test('each hash is salted: the same password hashes differently, and both verify', async (t) => {
    const hasher = make();
    const [one, two] = [await hasher.hash(PASSWORD), await hasher.hash(PASSWORD)];
    t.not(one, two);
    t.equal(await hasher.verify(PASSWORD, two), true);
  });

  t.test('a password is compared in one Unicode form (é typed either way)', async (t) => {
    const hasher = make();
    const composed = 'caf\u00e9 au lait, s\u2019il vous pla\u00eet';
    const stored = await hasher.hash(composed);
    t.equal(await hasher.verify(composed.normalize('NFD'), stored), true);
  });

  t.test('a record that is not a hash of its kind verifies nothing', async (t) => {
    const hasher = make();
    for (const stored of ['', PASSWORD, 'not used: these accounts never log in', 'x$y$z'])
      t.equal(await hasher.verify(PASSWORD, stored), false, JSON.stringify(stored));
  });
}

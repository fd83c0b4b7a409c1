import t from 'tap';
import { scryptPasswordHasher } from '../../../../src/adapters/security/scrypt-password-hasher.ts';

const hasher = scryptPasswordHasher({ N: 1024 });

t.test('a hash verifies its own password and no other', async (t) => {
  const stored = await hasher.hash('correct horse battery');
  t.match(stored, /^scrypt\$1024\$8\$1\$/);
  t.equal(await hasher.verify('correct horse battery', stored), true);
  t.equal(await hasher.verify('correct horse batterY', stored), false);
});

t.test('the same password hashes differently each time (random salt)', async (t) => {
  t.not(await hasher.hash('same password'), await hasher.hash('same password'));
});

t.test('malformed stored hashes never verify', async (t) => {
  for (const stored of ['', 'plain', 'bcrypt$1$2$3$4$5', 'scrypt$1024$8$1$$']) {
    t.equal(await hasher.verify('x', stored), false, stored || '(empty)');
  }
});

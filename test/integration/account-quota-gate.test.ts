import t from 'tap';
import { accountQuotaGate } from '../../src/adapters/quotas/account-quota-gate.ts';
import { composeQuotas } from '../../src/compose.ts';
import { policyFile } from '../helpers/accounts.ts';
import { testConfig } from '../helpers/app.ts';
import { testDatabase } from '../helpers/database.ts';
import { sql } from '../../src/adapters/postgres/database.ts';

// Ingestion asks its QuotaGate; in the service that gate is the accounts' quota service.

t.test('ingestion quotas are taken from the account quota service', async (t) => {
  const db = await testDatabase(t);
  const quotasFile = policyFile(t, (policy) => {
    (policy.quotas.fileUploadsPerDay.levels as Record<number, unknown>)[1] = 2;
    (policy.quotas.eventsPerImport.levels as Record<number, unknown>)[1] = 100;
  });
  const gate = accountQuotaGate(composeQuotas(testConfig({ quotasFile }), db.pool));
  const userId = await db.pool.oneFirst(sql.unsafe`
    insert into users (email, password_hash, trust_level) values ('uploader@example.org', 'x', 1) returning id`);

  t.same(await gate.consume(Number(userId), 'fileUploadsPerDay', 1), { ok: true });
  t.same(await gate.consume(Number(userId), 'fileUploadsPerDay', 1), { ok: true });
  const refused = await gate.consume(Number(userId), 'fileUploadsPerDay', 1);
  t.equal(refused.ok, false, 'the third upload of the day is refused');
  if (!refused.ok) {
    t.equal(refused.quota, 'fileUploadsPerDay');
    t.equal(refused.limit, 2);
    t.match(refused.resetsAt, /T00:00:00\.000Z$/, 'resets at midnight UTC');
  }

  t.same(
    await gate.consume(Number(userId), 'eventsPerImport', 100),
    { ok: true },
    'a ceiling is only checked',
  );
  t.equal((await gate.consume(Number(userId), 'eventsPerImport', 101)).ok, false);
  t.same(await gate.consume(null, 'fileUploadsPerDay', 1), { ok: true }, 'anonymous callers are not counted');
});

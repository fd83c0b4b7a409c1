import { type DatabasePool, sql } from '../../src/adapters/postgres/database.ts';
import { postgresUserStore } from '../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../src/adapters/security/scrypt-password-hasher.ts';

// The uploader the ingest benchmarks (ingest-bench.ts, ops/shutdown.ts) upload as: a user at trust
// level 5 (no quota limits) signed in on a running API, owning the catalog `bench` (uploads need
// write access to the catalog).

/** Signs the bench user in on the API at `base` and returns its token and the `bench` catalog's id. */
export async function benchUploader(
  pool: DatabasePool,
  base: string,
): Promise<{ token: string; catalogId: number }> {
  const password = 'bench password that is long enough';
  const user = await postgresUserStore(pool).upsert({
    email: 'bench@example.org',
    passwordHash: await scryptPasswordHasher({ N: 1024 }).hash(password),
    role: 'user',
    trustLevel: 5,
  });
  const login = await fetch(`${base}/api/users/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.org', password }),
  });
  if (login.status !== 200) throw new Error(`login answered ${login.status}: ${await login.text()}`);
  const { token } = (await login.json()) as { token: string };
  const catalogId = Number(
    await pool.oneFirst(sql.unsafe`
      insert into catalogs (slug, title, is_public, created_by) values ('bench', 'Bench', true, ${user.id})
      on conflict (slug) do update set created_by = excluded.created_by
      returning id`),
  );
  return { token, catalogId };
}

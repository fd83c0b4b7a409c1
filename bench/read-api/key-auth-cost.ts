// What authenticating a request costs with an API key against a session token, without the rest of
// a request around it (issue 38 §3): callers authenticating through
//  - the baseline: a session token (HMAC check, then the session and its user in one query);
//  - an API key: its row and owner in one primary-key query, SHA-256 and a constant-time compare,
//    and the last use written at most once a minute.
// Both on the benchmark database, alternated round by round so that the machine's load hits both
// alike; the user, session and key are removed at the end.
//
//   node bench/read-api/key-auth-cost.ts [--callers 20] [--duration 3] [--rounds 3]

import { parseArgs } from 'node:util';
import { createDatabasePool, sql } from '../../src/adapters/postgres/database.ts';
import { loadMigrations, migrate } from '../../src/adapters/postgres/migrator.ts';
import { postgresApiKeyStore } from '../../src/adapters/postgres/accounts/api-key-store.ts';
import { postgresSessionStore } from '../../src/adapters/postgres/accounts/session-store.ts';
import { postgresUserStore } from '../../src/adapters/postgres/accounts/user-store.ts';
import { sha256ApiKeySecrets } from '../../src/adapters/security/api-key-secrets.ts';
import { hmacTokenSigner } from '../../src/adapters/security/hmac-token-signer.ts';
import { authenticateApiKey, createApiKey } from '../../src/application/accounts/api-keys.ts';
import { authenticateToken } from '../../src/application/accounts/log-in.ts';
import { benchDatabaseUrl } from './bench-database.ts';
import { callRate, median } from './call-rate.ts';
import { loadAverage } from './measure.ts';

const { values: options } = parseArgs({
  options: {
    callers: { type: 'string', default: '20' },
    duration: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
  },
});

async function main(): Promise<void> {
  const url = await benchDatabaseUrl();
  await migrate(url, loadMigrations(), () => {});
  const pool = await createDatabasePool(url);
  const clock = { now: () => new Date() };
  const email = `bench-keys-${process.pid}@example.org`;
  const user = await postgresUserStore(pool).upsert({
    email,
    passwordHash: 'x',
    role: 'user',
    trustLevel: 1,
  });
  try {
    const sessions = postgresSessionStore(pool);
    const tokens = hmacTokenSigner('bench-session-secret-that-is-long-enough-0123456789');
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const session = await sessions.create(user.id, new Date(exp * 1000), new Date());
    const token = tokens.sign({ sub: user.id, sid: session.id, iat: exp - 3600, exp });
    const keyDeps = {
      keys: postgresApiKeyStore(pool),
      secrets: sha256ApiKeySecrets(),
      clock,
      recentUse: new Map(),
    };
    const { secret } = await createApiKey(
      keyDeps,
      { ...user, trustLevel: 1 },
      { name: 'bench', scope: 'read' },
    );
    const variants: [string, () => Promise<unknown>][] = [
      [
        'session token (baseline)',
        async () => (await authenticateToken({ sessions, tokens, clock }, token)).viewer,
      ],
      ['API key', () => authenticateApiKey(keyDeps, secret)],
    ];
    const results = new Map<string, number[]>(variants.map(([name]) => [name, []]));
    const callers = Number(options.callers);
    const seconds = Number(options.duration);
    for (let round = 1; round <= Number(options.rounds); round++) {
      for (const [name, call] of variants) {
        const rate = await callRate(
          async () => {
            if (!(await call())) throw new Error('authentication failed');
          },
          callers,
          seconds,
        );
        results.get(name)?.push(rate);
        process.stdout.write(`round ${round} ${name}: ${Math.round(rate)} auth/s; load ${loadAverage()}\n`);
      }
    }
    const base = median(results.get('session token (baseline)') ?? []);
    const rows = [...results].map(
      ([name, values]) =>
        `| ${name} | ${Math.round(median(values))} | ${(1000 / median(values)).toFixed(3)} ms | ${(median(values) / base).toFixed(2)}x |`,
    );
    process.stdout.write(
      `\n| credential | median auth/s | per auth (all callers) | vs baseline |\n|---|---|---|---|\n${rows.join('\n')}\n\n` +
        `${callers} callers, ${seconds} s per variant and round; load ${loadAverage()}\n`,
    );
  } finally {
    await pool.query(sql.unsafe`delete from users where id = ${user.id}`);
    await pool.end();
  }
}

await main();

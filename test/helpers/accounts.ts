import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Test } from 'tap';
import { parse, stringify } from 'yaml';
import { type Config, projectRoot } from '../../src/adapters/config/environment.ts';
import { sql } from '../../src/adapters/postgres/database.ts';
import { postgresUserStore } from '../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../src/adapters/security/scrypt-password-hasher.ts';
import type { QuotaName } from '../../src/domain/accounts/quotas.ts';
import type { Clock } from '../../src/ports/clock.ts';
import type { Role, TrustLevel } from '../../src/domain/accounts/users.ts';
import { testApp } from './app.ts';
import type { TestDatabase } from './database.ts';

// Accounts for integration tests: an app with a known session secret and a quotas file the test
// may change, users created straight in the database, and logins through the API.

export const TEST_SESSION_SECRET = 'test-session-secret-that-is-long-enough-0123456789';
export const PASSWORD = 'correct horse battery staple';

// Cheap scrypt parameters for fixtures; the stored hash carries them, so login verifies quickly.
const fastHasher = scryptPasswordHasher({ N: 1024 });

type RawPolicy = Record<string, unknown> & { quotas: Record<QuotaName, { levels: Record<number, unknown> }> };

/** A quotas file: config/quotas.yaml with generous login and password-confirmation limits, changed by `change`. */
export function policyFile(t: Test, change: (policy: RawPolicy) => void = () => {}): string {
  const raw = parse(readFileSync(path.join(projectRoot, 'config', 'quotas.yaml'), 'utf8')) as RawPolicy;
  const generous = { burst: { seconds: 60, limit: 10_000 } };
  raw.loginAttempts = { perIpAndEmail: generous, perIp: generous };
  raw.passwordConfirmations = { perAccount: generous, perIp: generous };
  change(raw);
  const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-policy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'quotas.yaml');
  writeFileSync(file, stringify(raw));
  return file;
}

/**
 * Policy change for tests that fire many anonymous /api/v1 requests from one IP, some at once: the
 * rate limit and the places of costly reads are lifted for them (each is tested on its own:
 * rate-limit tests, fair-share.test.ts). The places of exports stay (v1-export-slots.test.ts).
 */
export function unlimitedAnonymousReads(raw: RawPolicy): void {
  const window = (seconds: number) => ({ seconds, limit: 1_000_000_000 });
  (raw.rateLimits as Record<string, unknown>).anonymous = {
    burst: window(10),
    hourly: window(3600),
    daily: window(86400),
  };
  (raw.pagedRows as Record<string, unknown>).anonymous = {
    burst: window(10),
    hourly: window(3600),
    daily: window(86400),
  };
  (raw.concurrentRequests as Record<string, unknown>).reads = {
    perAddress: 'unlimited',
    perAccount: 'unlimited',
    lowTrustShare: 'unlimited',
  };
}

export type TestUser = { id: number; email: string; password: string; role: Role; trustLevel: TrustLevel };

export type AccountsApp = {
  app: FastifyInstance;
  db: TestDatabase;
  createUser(options?: { email?: string; role?: Role; trustLevel?: TrustLevel }): Promise<TestUser>;
  login(user: TestUser): Promise<string>;
  as(token: string | null): Requester;
};

export type Requester = (
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT',
  url: string,
  payload?: unknown,
) => Promise<LightMyRequestResponse>;

let counter = 0;

export async function accountsApp(
  t: Test,
  options: { policy?: (policy: RawPolicy) => void; config?: Partial<Config>; clock?: Clock } = {},
): Promise<AccountsApp> {
  const { app, db } = await testApp(t, {
    ...(options.clock ? { clock: options.clock } : {}),
    config: {
      ...options.config,
      sessionSecret: TEST_SESSION_SECRET,
      quotasFile: policyFile(t, options.policy),
    },
  });
  const users = postgresUserStore(db.pool);
  const as =
    (token: string | null): Requester =>
    (method, url, payload) =>
      app.inject({
        method,
        url,
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
        ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
      });
  return {
    app,
    db,
    async createUser(opts = {}) {
      counter += 1;
      const email = opts.email ?? `user${counter}-${process.pid}@example.org`;
      const role = opts.role ?? 'user';
      const trustLevel = opts.trustLevel ?? 1;
      const stored = await users.upsert({
        email,
        passwordHash: await fastHasher.hash(PASSWORD),
        role,
        trustLevel,
      });
      return { id: stored.id, email, password: PASSWORD, role, trustLevel };
    },
    async login(user) {
      const response = await app.inject({
        method: 'POST',
        url: '/api/users/login',
        payload: { email: user.email, password: user.password },
      });
      if (response.statusCode !== 200)
        throw new Error(`login failed: ${response.statusCode} ${response.body}`);
      return response.json().token as string;
    },
    as,
  };
}

/**
 * A public catalog with a public dataset and a private one (no owner recorded: admins only), and a
 * private catalog of `ownerId` with a public dataset; five events in each dataset. So anonymous
 * callers and strangers see 5 events, the owner 10, admins 15.
 */
export async function insertAccessFixture(db: TestDatabase, ownerId: number): Promise<void> {
  await db.pool.query(sql.unsafe`
    with pub as (
      insert into catalogs (slug, title, is_public) values ('open', 'Open', true) returning id
    ), priv as (
      insert into catalogs (slug, title, is_public, created_by) values ('mine', 'Mine', false, ${ownerId}) returning id
    ), ds as (
      insert into datasets (catalog_id, slug, title, is_public)
      select id, 'open-data', 'Open data', true from pub
      union all select id, 'hidden-in-open', 'Private dataset in a public catalog', false from pub
      union all select id, 'my-data', 'My data', true from priv
      returning id, catalog_id, slug
    )
    insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
    select ds.id, ds.catalog_id, ds.slug || '-' || n, 'event ' || n, '{}'::jsonb,
           ST_SetSRID(ST_MakePoint(13.4 + n * 0.001, 52.5), 4326), timestamptz '2025-01-01' + n * interval '1 day'
    from ds cross join generate_series(1, 5) n`);
}

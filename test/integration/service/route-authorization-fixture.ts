import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Test } from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../../src/adapters/security/scrypt-password-hasher.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import type { Role, TrustLevel } from '../../../src/domain/accounts/users.ts';
import { multipart } from '../../fixtures/ingest/client.ts';
import {
  PASSWORD,
  policyFile,
  TEST_SESSION_SECRET,
  unlimitedAnonymousReads,
} from '../../helpers/accounts.ts';
import { testApp, testConfig } from '../../helpers/app.ts';
import type { TestDatabase } from '../../helpers/database.ts';
import { pythonRepo, switchScrapers, WRITES_TWO_ROWS } from '../scrapers/scraper-fixtures.ts';
import type { KeyCaller } from './route-authorization-keys.ts';

// The fixture of the route authorization matrix: an owner (trust level 3, so scrapers are open to
// them) with a private catalog, a dataset, an event, an import (file and job), a scheduled import,
// a scraper repo with a scraper and a run; a stranger (another level-3 user) and an admin. Routes
// that destroy what they touch get a fresh resource for each caller from the `fresh*` makers.

export const CALLERS = ['anonymous', 'stranger', 'owner', 'admin'] as const;
export type Caller = (typeof CALLERS)[number];

const hasher = scryptPasswordHasher({ N: 1024 });
const Id = row(Type.Object({ id: Type.Number() }));

export type MatrixFixture = {
  app: FastifyInstance;
  db: TestDatabase;
  users: Record<Exclude<Caller, 'anonymous'>, { id: number; email: string }>;
  /** A new session of the caller (the matrix's requests share one per caller; logout ends its own). */
  login(email: string): Promise<string>;
  tokens: Record<Exclude<Caller, 'anonymous'>, string>;
  /** The owner's API keys (route-authorization-keys.ts): read-only, write, write for another catalog. */
  keys: Record<KeyCaller, string>;
  catalog: number;
  dataset: number;
  event: number;
  file: number;
  job: number;
  schedule: number;
  /** An upload of the owner's waiting for the import wizard's configuration (`start=false`). */
  draft: number;
  /** A data export of the owner's (failed, so it blocks no new request). */
  dataExport: number;
  /** A background export of a view, the owner's (failed: no worker runs it). */
  viewExport: string;
  repo: number;
  scraper: number;
  run: number;
  /** A multipart upload of a small CSV into the owner's catalog. */
  upload(): { payload: Buffer; headers: Record<string, string> };
  freshCatalog(): Promise<number>;
  freshDataset(): Promise<number>;
  freshEvent(): Promise<number>;
  freshRepo(): Promise<number>;
  /** A new scheduled import of the owner's (for the routes that delete one). */
  freshSchedule(): Promise<number>;
  freshUser(): Promise<{ id: number; email: string; token: string }>;
};

const CSV = 'time,latitude,longitude,title\n2026-01-01T00:00:00Z,52.5,13.4,a\n';

export async function matrixFixture(t: Test): Promise<MatrixFixture> {
  // Many anonymous requests from one address: no rate limit may decide an answer (the logged-in
  // callers are level 5 and admins, who have none).
  const quotasFile = policyFile(t, unlimitedAnonymousReads);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-matrix-'));
  // Scrapers are switched on below, which needs a runner address (else /api/health reports the
  // conflict with a 503); nothing listens there: this fixture runs no scraper, and a runner that does
  // not answer is only a warning.
  const runner = { scraperRunnerUrl: 'http://127.0.0.1:9', scraperApiKey: 'matrix-runner-key-0123' };
  const { app, db, services } = await testApp(t, {
    config: { sessionSecret: TEST_SESSION_SECRET, quotasFile, dataDir, ...runner },
  });
  const store = postgresUserStore(db.pool);
  const createUser = async (role: Role, trustLevel: TrustLevel) => {
    const email = `matrix-${randomUUID()}@example.org`;
    const stored = await store.upsert({ email, passwordHash: await hasher.hash(PASSWORD), role, trustLevel });
    return { id: stored.id, email };
  };
  const login = async (email: string) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/users/login',
      payload: { email, password: PASSWORD },
    });
    if (response.statusCode !== 200) throw new Error(`login failed: ${response.body}`);
    return response.json().token as string;
  };
  const users = {
    owner: await createUser('user', 5),
    stranger: await createUser('user', 5),
    admin: await createUser('admin', 1),
  };
  // Trust level 5 for the owner and stranger: no quota can decide an answer; scrapers open to both.
  const tokens = {
    owner: await login(users.owner.email),
    stranger: await login(users.stranger.email),
    admin: await login(users.admin.email),
  };
  const insertId = async (query: ReturnType<typeof sql.unsafe>) =>
    (await db.pool.one(sql.type(Id)`${query}`)).id;
  const freshCatalog = () =>
    insertId(sql.unsafe`insert into catalogs (slug, title, is_public, created_by)
      values (${`c-${randomUUID()}`}, 'Owner catalog', false, ${users.owner.id}) returning id`);
  const catalog = await freshCatalog();
  const freshDataset = () =>
    insertId(sql.unsafe`insert into datasets (catalog_id, slug, title, is_public, created_by)
      values (${catalog}, ${`d-${randomUUID()}`}, 'Owner data', false, ${users.owner.id}) returning id`);
  const dataset = await freshDataset();
  const freshEvent = () =>
    insertId(sql.unsafe`insert into events (dataset_id, catalog_id, unique_id, title, data, location, event_timestamp)
      values (${dataset}, ${catalog}, ${randomUUID()}, 'event', '{}'::jsonb,
              ST_SetSRID(ST_MakePoint(13.4, 52.5), 4326), timestamptz '2025-01-01') returning id`);
  const event = await freshEvent();

  const upload = () => multipart({ catalog: String(catalog) }, { name: 'matrix.csv', content: CSV });
  const first = upload();
  const uploaded = await app.inject({
    method: 'POST',
    url: '/api/ingest-files',
    payload: first.payload,
    headers: { ...first.headers, authorization: `Bearer ${tokens.owner}` },
  });
  if (uploaded.statusCode !== 201) throw new Error(`upload failed: ${uploaded.body}`);
  const fileDoc = uploaded.json().doc as { id: number; jobs: { id: number }[] };
  const waiting = multipart(
    { catalog: String(catalog), start: 'false' },
    { name: 'matrix.csv', content: CSV },
  );
  const drafted = await app.inject({
    method: 'POST',
    url: '/api/ingest-files',
    payload: waiting.payload,
    headers: { ...waiting.headers, authorization: `Bearer ${tokens.owner}` },
  });
  if (drafted.statusCode !== 201) throw new Error(`draft upload failed: ${drafted.body}`);
  const freshSchedule = async () => {
    const scheduled = await app.inject({
      method: 'POST',
      url: '/api/scheduled-ingests',
      payload: { name: 'Feed', url: 'https://example.org/feed.csv', catalog },
      headers: { authorization: `Bearer ${tokens.owner}` },
    });
    if (scheduled.statusCode !== 201) throw new Error(`schedule failed: ${scheduled.body}`);
    return scheduled.json().doc.id as number;
  };
  const schedule = await freshSchedule();

  await switchScrapers(db.pool, true);
  const scraperDeps = composeScraperDeps(testConfig(runner), db.pool, services.boss);
  const freshRepo = async () => {
    const slug = `repo-${randomUUID().slice(0, 8)}`;
    const created = await app.inject({
      method: 'POST',
      url: '/api/scraper-repos',
      payload: {
        name: slug,
        slug,
        sourceType: 'upload',
        code: pythonRepo(WRITES_TWO_ROWS),
      },
      headers: { authorization: `Bearer ${tokens.owner}` },
    });
    if (created.statusCode !== 201) throw new Error(`repo failed: ${created.body}`);
    return created.json().doc.id as number;
  };
  const repo = await freshRepo();
  const synced = await syncScraperRepo(scraperDeps, repo);
  if (synced.status !== 'synced') throw new Error(`sync failed: ${JSON.stringify(synced)}`);
  const [scraper] = await scraperDeps.scrapers.listByRepo(repo);
  if (!scraper) throw new Error('no scraper after sync');
  const run = await scraperDeps.runs.createQueued({
    scraperId: scraper.id,
    runId: randomUUID(),
    triggeredBy: 'manual',
    triggeredByUser: users.owner.id,
    scheduledFor: null,
  });
  if (!run) throw new Error('no run');

  const ownerKey = async (scope: 'read' | 'write', catalogs?: number[]) => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/api-keys',
      payload: { name: `matrix ${scope}`, scope, ...(catalogs ? { catalogs } : {}) },
      headers: { authorization: `Bearer ${tokens.owner}` },
    });
    if (created.statusCode !== 201) throw new Error(`api key failed: ${created.body}`);
    return created.json().secret as string;
  };
  const keys = {
    readKey: await ownerKey('read'),
    writeKey: await ownerKey('write'),
    otherCatalogKey: await ownerKey('write', [await freshCatalog()]),
  };

  return {
    app,
    db,
    users,
    login,
    tokens,
    keys,
    catalog,
    dataset,
    event,
    file: fileDoc.id,
    job: fileDoc.jobs[0]?.id ?? 0,
    schedule,
    draft: drafted.json().draft.id as number,
    dataExport: await insertId(
      sql.unsafe`insert into data_exports (user_id, status) values (${users.owner.id}, 'failed') returning id`,
    ),
    viewExport: await db.pool
      .one(
        sql.type(row(Type.Object({ id: Type.String() })))`insert into view_export_jobs
          (id, export_key, format, query, viewer, viewer_id, state, reason, estimated)
        values (${randomUUID()}, 'matrix', 'fgb', '{}', jsonb_build_object('id', ${users.owner.id}::int), ${users.owner.id}, 'failed', 'matrix', 1)
        returning id::text`,
      )
      .then((found) => found.id),
    repo,
    scraper: scraper.id,
    run: run.id,
    upload,
    freshCatalog,
    freshDataset,
    freshEvent,
    freshRepo,
    freshSchedule,
    async freshUser() {
      const user = await createUser('user', 1);
      return { ...user, token: await login(user.email) };
    },
  };
}

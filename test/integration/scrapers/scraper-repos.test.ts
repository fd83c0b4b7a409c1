import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { createScraperRepo } from '../../../src/application/scrapers/create-scraper-repo.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { updateScraperRepoSource } from '../../../src/application/scrapers/update-scraper-repo-source.ts';
import { testDatabase } from '../../helpers/database.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { accountsApp } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { createUser, openBoss, pythonRepo, scraperDeps } from './scraper-fixtures.ts';

const MANIFEST = `
defaults:
  limits: { timeout: 120 }
scrapers:
  - { name: Events, slug: events, entrypoint: main.py, schedule: "0 * * * *" }
  - { name: Venues, slug: venues, entrypoint: venues.js, runtime: node, output: venues.csv }
`;

t.test('creating a repo: flag, trust level, path traversal and the repos quota are checked', async (t) => {
  const db = await testDatabase(t);
  const off = await scraperDeps(t, db, { enableScrapers: false });
  const deps = await scraperDeps(t, db);
  const trusted = await createUser(db.pool, 3);
  const regular = await createUser(db.pool, 2);
  const input = (slug: string) => ({ name: slug, slug, sourceType: 'upload', code: pythonRepo('print(1)') });

  await t.rejects(createScraperRepo(off, trusted, input('a')), {
    kind: 'forbidden',
    code: 'SCRAPERS_DISABLED',
  });
  await t.rejects(createScraperRepo(deps, regular, input('a')), {
    kind: 'forbidden',
    code: 'TRUST_LEVEL_TOO_LOW',
  });
  await t.rejects(
    createScraperRepo(deps, trusted, { ...input('a'), code: { 'scrapers.yml': '', '../x.py': '' } }),
    { kind: 'validation', code: 'INVALID_PATH' },
  );
  await t.rejects(createScraperRepo(deps, trusted, { ...input('a'), code: { '/etc/x.py': '' } }), {
    kind: 'validation',
    code: 'INVALID_PATH',
  });
  for (const slug of ['r1', 'r2', 'r3']) {
    const repo = await createScraperRepo(deps, trusted, input(slug));
    t.equal(repo.syncStatus, 'pending');
    t.equal(repo.createdBy, trusted.id);
    // A repo that is not stored (its slug is taken) gives its scraperRepos unit back.
    if (slug === 'r1') await t.rejects(createScraperRepo(deps, trusted, input('r1')));
  }
  await t.rejects(createScraperRepo(deps, trusted, input('r4')), {
    kind: 'quota_exceeded',
    code: 'SCRAPER_REPOS_QUOTA_EXCEEDED',
  });
  const owned = await db.pool.oneFirst(sql.type(row(Type.Object({ used: Type.Number() })))`
    select used from quota_usage where user_id = ${trusted.id} and quota = 'scraperRepos'`);
  t.equal(owned, 3, 'the quota counts the repos stored, not the attempts');
  const admin = await createUser(db.pool, 0, 'admin');
  for (const slug of ['a1', 'a2', 'a3', 'a4']) await createScraperRepo(deps, admin, input(slug));
  const adminRepos = await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
    select count(*)::int as n from scraper_repos where created_by = ${admin.id}`);
  t.equal(adminRepos, 4, 'admins are unlimited');

  const queued = await db.pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
    select count(*)::int as count from pgboss.job where name = 'scraper-repo-sync-job'`);
  t.equal(queued, 7, 'each created repo queued its sync');
});

t.test(
  "the flag is the admin's feature-flag store: off by default, on after PATCH /api/feature-flags",
  async (t) => {
    const { app, db, createUser: createAccount, login } = await accountsApp(t);
    const deps = composeScraperDeps(testConfig(), db.pool, await openBoss(t, db));
    const trusted = await createAccount({ trustLevel: 3 });
    const actor = { id: trusted.id, role: trusted.role, trustLevel: trusted.trustLevel };
    const input = { name: 'Events', slug: 'events', sourceType: 'upload', code: pythonRepo('print(1)') };

    await t.rejects(createScraperRepo(deps, actor, input), { kind: 'forbidden', code: 'SCRAPERS_DISABLED' });
    const admin = await login(await createAccount({ role: 'admin', trustLevel: 5 }));
    const switched = await app.inject({
      method: 'PATCH',
      url: '/api/feature-flags',
      headers: { authorization: `Bearer ${admin}` },
      payload: { enableScrapers: true },
    });
    t.equal(switched.statusCode, 200);
    t.match(await createScraperRepo(deps, actor, input), { slug: 'events', createdBy: trusted.id });
  },
);

t.test('sync reconciles scrapers by slug: create, update, delete, keep a running one', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db);
  const owner = await createUser(db.pool, 4);
  const repo = await createScraperRepo(deps, owner, {
    name: 'City events',
    slug: 'city-events',
    sourceType: 'upload',
    code: { 'scrapers.yml': MANIFEST, 'main.py': '', 'venues.js': '' },
  });

  const first = await syncScraperRepo(deps, repo.id);
  t.same(first, {
    status: 'synced',
    result: { created: ['events', 'venues'], updated: [], deleted: [], keptWhileRunning: [] },
  });
  const synced = await deps.repos.get(repo.id);
  t.equal(synced?.syncStatus, 'synced');
  t.equal(synced?.lastSyncError, null);
  t.ok(synced?.lastSyncAt);
  const [events, venues] = await deps.scrapers.listByRepo(repo.id);
  t.match(events, {
    slug: 'events',
    runtime: 'python',
    schedule: '0 * * * *',
    timeoutSecs: 120,
    memoryMb: 512,
    outputFile: 'data.csv',
    enabled: true,
  });
  t.match(venues, { slug: 'venues', runtime: 'node', schedule: null, outputFile: 'venues.csv' });
  if (!events || !venues) throw new Error('scrapers missing');

  // Settings kept on the record survive a re-sync; a changed schedule starts afresh.
  await deps.scrapers.update(events.id, { autoImport: true, envVars: { CITY: 'berlin' } });
  const changed = MANIFEST.replace('Events', 'City events')
    .replace('0 * * * *', '*/10 * * * *')
    .replace(/ {2}- \{ name: Venues.*\n/, '  - { name: Shows, slug: shows, entrypoint: main.py }\n');
  await updateScraperRepoSource(deps, owner, repo.id, {
    sourceType: 'upload',
    code: { 'scrapers.yml': changed, 'main.py': '' },
  });
  const second = await syncScraperRepo(deps, repo.id);
  t.same(second, {
    status: 'synced',
    result: { created: ['shows'], updated: ['events'], deleted: ['venues'], keptWhileRunning: [] },
  });
  const updated = await deps.scrapers.get(events.id);
  t.match(updated, {
    name: 'City events',
    schedule: '*/10 * * * *',
    autoImport: true,
    envVars: { CITY: 'berlin' },
  });
  t.ok(new Date(updated?.scheduleSince ?? 0) > new Date(events.scheduleSince), 'the new schedule starts now');
  t.equal(await deps.scrapers.get(venues.id), null);

  // A scraper whose run is in progress is not deleted mid-run: unscheduled, removed by a later sync.
  const shows = (await deps.scrapers.listByRepo(repo.id)).find((s) => s.slug === 'shows');
  if (!shows) throw new Error('shows missing');
  const run = await deps.runs.createQueued({
    scraperId: shows.id,
    runId: crypto.randomUUID(),
    triggeredBy: 'manual',
    triggeredByUser: owner.id,
    scheduledFor: null,
  });
  t.ok(run && (await deps.runs.start(run.id)));
  await updateScraperRepoSource(deps, owner, repo.id, {
    sourceType: 'upload',
    code: { 'scrapers.yml': MANIFEST.replace(/ {2}- \{ name: Venues.*\n/, ''), 'main.py': '' },
  });
  // The syncs queued by the edits above ran (here: were consumed by this test).
  await db.pool.query(sql.unsafe`delete from pgboss.job where name = 'scraper-repo-sync-job'`);
  const third = await syncScraperRepo(deps, repo.id);
  t.same(third, {
    status: 'synced',
    result: { created: [], updated: ['events'], deleted: [], keptWhileRunning: ['shows'] },
  });
  t.ok(await deps.scrapers.get(shows.id), 'still there while it runs');
  const later = await db.pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
    select count(*)::int as count from pgboss.job
    where name = 'scraper-repo-sync-job' and state = 'created' and start_after > now()`);
  t.equal(later, 1, 'a later sync is queued to delete it');
  await deps.runs.finish(run?.id ?? 0, 'running', {
    status: 'success',
    exitCode: 0,
    durationMs: 5,
    stdout: '',
    stderr: '',
    error: null,
    errorCode: null,
    outputRows: 0,
    outputBytes: 0,
    resultFile: null,
  });
  const fourth = await syncScraperRepo(deps, repo.id);
  t.match(fourth, { status: 'synced', result: { deleted: ['shows'] } });
});

t.test('an invalid manifest changes nothing and lists every problem in lastSyncError', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db);
  const owner = await createUser(db.pool, 3);
  const repo = await createScraperRepo(deps, owner, {
    name: 'r',
    slug: 'r',
    sourceType: 'upload',
    code: { 'scrapers.yml': MANIFEST },
  });
  await syncScraperRepo(deps, repo.id);

  const broken =
    'scrapers:\n  - { name: A, slug: a, entrypoint: a.py }\n  - { name: B, slug: b, entrypoint: b.py }\n  - { name: C, slug: c, entrypoint: ../c.py, limits: { timeout: 5 } }\n';
  await updateScraperRepoSource(deps, owner, repo.id, {
    sourceType: 'upload',
    code: { 'scrapers.yml': broken },
  });
  t.match(await syncScraperRepo(deps, repo.id), { status: 'failed' });
  const failed = await deps.repos.get(repo.id);
  t.equal(failed?.syncStatus, 'failed');
  t.equal(
    failed?.lastSyncError,
    'scrapers[2].entrypoint: must not contain ".."\nscrapers[2].limits.timeout: must be from 10 to 3600 seconds (got 5)',
  );
  t.same(
    (await deps.scrapers.listByRepo(repo.id)).map((s) => s.slug),
    ['events', 'venues'],
    'nothing changed',
  );

  await updateScraperRepoSource(deps, owner, repo.id, { sourceType: 'upload', code: { 'main.py': '' } });
  await syncScraperRepo(deps, repo.id);
  t.equal((await deps.repos.get(repo.id))?.lastSyncError, 'scrapers.yml: not found at the repo root');

  await updateScraperRepoSource(deps, owner, repo.id, {
    sourceType: 'upload',
    code: { 'scrapers.yml': 'scrapers: [ {' },
  });
  await syncScraperRepo(deps, repo.id);
  t.match(
    (await deps.repos.get(repo.id))?.lastSyncError,
    /^scrapers\.yml: invalid YAML \(line 1, column \d+\)/,
  );
});

t.test('rapid edits collapse into one queued sync; an unchanged source queues none', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db);
  const owner = await createUser(db.pool, 3);
  const code = { 'scrapers.yml': MANIFEST };
  const repo = await createScraperRepo(deps, owner, { name: 'r', slug: 'r', sourceType: 'upload', code });
  for (let edit = 0; edit < 5; edit++) {
    const result = await updateScraperRepoSource(deps, owner, repo.id, {
      sourceType: 'upload',
      code: { ...code, 'main.py': `# edit ${edit}` },
    });
    t.ok(result.syncQueued);
  }
  const same = await updateScraperRepoSource(deps, owner, repo.id, {
    sourceType: 'upload',
    code: { ...code, 'main.py': '# edit 4' },
  });
  t.notOk(same.syncQueued);
  const jobs = await db.pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
    select count(*)::int as count from pgboss.job where name = 'scraper-repo-sync-job' and state = 'created'`);
  t.equal(jobs, 1);
  const other = await createUser(db.pool, 5);
  await t.rejects(updateScraperRepoSource(deps, other, repo.id, { sourceType: 'upload', code }), {
    kind: 'forbidden',
    code: 'FORBIDDEN',
  });
  await t.rejects(updateScraperRepoSource(deps, owner, 999_999, { sourceType: 'upload', code }), {
    kind: 'not_found',
    code: 'SCRAPER_REPO_NOT_FOUND',
  });
});

import { createHash } from 'node:crypto';
import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { CODE_LIMITS } from '../../../src/application/scrapers/scraper-collections.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { accountsApp } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { completedScraperImport, openBoss, pythonRepo } from './scraper-fixtures.ts';

// The scraper-repos, scrapers and scraper-runs collections over HTTP, on a real database: every
// route, each access level (anonymous, level 2, level 3 with its quota, another user, admin), the
// feature flag, and hostile bodies.

const COLLECTIONS = ['scraper-repos', 'scrapers', 'scraper-runs'] as const;
const TWO_SCRAPERS = `
scrapers:
  - { name: Events, slug: events, entrypoint: main.py, schedule: "0 * * * *" }
  - { name: Venues, slug: venues, entrypoint: main.py }
`;

const count = (n: unknown) => Number(n);

t.test('scraper collections API', async (t) => {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const scrapers = composeScraperDeps(testConfig(), db.pool, await openBoss(t, db));
  const admin = await createUser({ role: 'admin', trustLevel: 5 });
  const adminApi = as(await login(admin));
  const trusted = await createUser({ trustLevel: 3 });
  const trustedApi = as(await login(trusted));
  const power = await createUser({ trustLevel: 4 });
  const powerApi = as(await login(power));
  const regularApi = as(await login(await createUser({ trustLevel: 2 })));
  const anonymous = as(null);
  const uploadRepo = (slug: string, code = pythonRepo('print(1)')) => ({
    name: `Repo ${slug}`,
    slug,
    sourceType: 'upload',
    code,
  });
  const syncJobs = async (repoId: number) =>
    count(
      await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
        select count(*)::int as n from pgboss.job
        where name = 'scraper-repo-sync-job' and (data->>'repoId')::bigint = ${repoId} and state = 'created'`),
    );

  await t.test('creating is denied while enableScrapers is off', async (t) => {
    const response = await trustedApi('POST', '/api/scraper-repos', uploadRepo('early'));
    t.equal(response.statusCode, 403, response.body);
    t.equal(response.json().code, 'SCRAPERS_DISABLED');
    const flag = await adminApi('PATCH', '/api/feature-flags', { enableScrapers: true });
    t.equal(flag.statusCode, 200, flag.body);
  });

  await t.test('anonymous callers get 401 and levels 0-2 get 403 on every route', async (t) => {
    for (const collection of COLLECTIONS) {
      const list = await anonymous('GET', `/api/${collection}`);
      t.equal(list.statusCode, 401, `${collection} list anonymous`);
      t.equal((await anonymous('GET', `/api/${collection}/1`)).statusCode, 401);
      const low = await regularApi('GET', `/api/${collection}`);
      t.equal(low.statusCode, 403, `${collection} list level 2`);
      t.equal(low.json().code, 'TRUST_LEVEL_TOO_LOW');
      t.equal((await regularApi('GET', `/api/${collection}/1`)).statusCode, 403);
    }
    t.equal((await anonymous('POST', '/api/scraper-repos', uploadRepo('anon'))).statusCode, 401);
    const create = await regularApi('POST', '/api/scraper-repos', uploadRepo('low'));
    t.equal(create.statusCode, 403);
    t.equal(create.json().code, 'TRUST_LEVEL_TOO_LOW');
    t.equal((await anonymous('PATCH', '/api/scrapers/1', { enabled: false })).statusCode, 401);
    t.equal((await regularApi('PATCH', '/api/scraper-repos/1', { name: 'x' })).statusCode, 403);
    t.equal((await regularApi('DELETE', '/api/scraper-repos/1')).statusCode, 403);
    t.equal((await regularApi('POST', '/api/scraper-runs/1/cancel')).statusCode, 403);
  });

  const created = await trustedApi(
    'POST',
    '/api/scraper-repos',
    uploadRepo('events', pythonRepo('print(1)', TWO_SCRAPERS)),
  );
  t.equal(created.statusCode, 201, created.body);
  const repoId = created.json().doc.id as number;

  await t.test(
    'a created repo: the owner, pending sync, one sync queued, code on the document only',
    async (t) => {
      t.match(created.json(), {
        message: String,
        doc: {
          id: Number,
          name: 'Repo events',
          slug: 'events',
          sourceType: 'upload',
          gitUrl: null,
          gitBranch: null,
          catalog: null,
          createdBy: trusted.id,
          syncStatus: 'pending',
          lastSyncAt: null,
          lastSyncError: null,
          code: { 'scrapers.yml': TWO_SCRAPERS, 'main.py': 'print(1)' },
        },
      });
      t.equal(await syncJobs(repoId), 1);
      const list = await trustedApi('GET', '/api/scraper-repos');
      t.equal(list.statusCode, 200, list.body);
      t.match(list.json(), { totalDocs: 1, page: 1, limit: 10, hasNextPage: false });
      t.equal(list.json().docs[0].fileCount, 2);
      t.notOk('code' in list.json().docs[0], 'lists leave the code out');
      const one = await trustedApi('GET', `/api/scraper-repos/${repoId}`);
      t.same(one.json().code, { 'scrapers.yml': TWO_SCRAPERS, 'main.py': 'print(1)' });
    },
  );

  await t.test('hostile and malformed repo bodies are 400 (413 beyond the body limit)', async (t) => {
    const cases: [string, unknown, string | undefined][] = [
      [
        'parent traversal',
        { ...uploadRepo('h1'), code: { 'scrapers.yml': 'x', '../evil.py': 'x' } },
        'INVALID_PATH',
      ],
      ['nested traversal', { ...uploadRepo('h2'), code: { 'a/../../evil.py': 'x' } }, 'INVALID_PATH'],
      ['absolute path', { ...uploadRepo('h3'), code: { '/etc/cron.d/x': 'x' } }, 'INVALID_PATH'],
      ['empty name', { ...uploadRepo('h4'), code: { '': 'x' } }, 'INVALID_PATH'],
      ['backslash', { ...uploadRepo('h5'), code: { 'a\\..\\b': 'x' } }, 'INVALID_PATH'],
      ['no files', { ...uploadRepo('h6'), code: {} }, 'INVALID_CODE'],
      ['non-string content', { ...uploadRepo('h7'), code: { 'main.py': { nested: true } } }, undefined],
      [
        'plain http git',
        { name: 'g', slug: 'g1', sourceType: 'git', gitUrl: 'http://example.org/r.git' },
        'INVALID_GIT_URL',
      ],
      [
        'file url',
        { name: 'g', slug: 'g2', sourceType: 'git', gitUrl: 'file:///etc/passwd' },
        'INVALID_GIT_URL',
      ],
      [
        'credentials in url',
        { name: 'g', slug: 'g3', sourceType: 'git', gitUrl: 'https://u:p@example.org/r.git' },
        'INVALID_GIT_URL',
      ],
      [
        'option-like branch',
        {
          name: 'g',
          slug: 'g4',
          sourceType: 'git',
          gitUrl: 'https://example.org/r.git',
          gitBranch: '--upload-pack=x',
        },
        'INVALID_GIT_BRANCH',
      ],
      ['git without url', { name: 'g', slug: 'g5', sourceType: 'git' }, 'INVALID_GIT_URL'],
      [
        'code on a git repo',
        { name: 'g', slug: 'g6', sourceType: 'git', gitUrl: 'https://example.org/r.git', code: { a: 'b' } },
        'INVALID_SOURCE_FIELD',
      ],
      ['unknown field', { ...uploadRepo('h8'), createdBy: admin.id }, undefined],
      ['unknown source type', { ...uploadRepo('h9'), sourceType: 'ftp' }, undefined],
      ['bad slug', { ...uploadRepo('h10'), slug: 'Not A Slug' }, undefined],
      ['long name', { ...uploadRepo('h11'), name: 'n'.repeat(256) }, undefined],
      [
        'too many files',
        {
          ...uploadRepo('h12'),
          code: Object.fromEntries(
            Array.from({ length: CODE_LIMITS.maxFiles + 1 }, (_, i) => [`f${i}.py`, '']),
          ),
        },
        undefined,
      ],
      [
        'too much code',
        {
          ...uploadRepo('h13'),
          code: { 'scrapers.yml': 'x', 'big.py': 'x'.repeat(CODE_LIMITS.maxTotalBytes) },
        },
        'CODE_TOO_LARGE',
      ],
    ];
    for (const [label, body, code] of cases) {
      const response = await powerApi('POST', '/api/scraper-repos', body);
      t.equal(response.statusCode, 400, `${label}: ${response.body}`);
      t.match(response.json(), { error: String });
      if (code) t.equal(response.json().code, code, label);
    }
    const proto = await app.inject({
      method: 'POST',
      url: '/api/scraper-repos',
      headers: { authorization: `Bearer ${await login(power)}`, 'content-type': 'application/json' },
      payload: '{"name":"p","slug":"p","sourceType":"upload","code":{"__proto__":{"x":"y"},"a.py":"1"}}',
    });
    t.equal(proto.statusCode, 400, `__proto__ key: ${proto.body}`);
    const huge = await powerApi('POST', '/api/scraper-repos', {
      ...uploadRepo('huge'),
      code: { 'scrapers.yml': 'x', 'big.py': 'x'.repeat(2 * 1024 * 1024) },
    });
    t.equal(huge.statusCode, 413, 'beyond the HTTP body limit');
    const duplicate = await powerApi('POST', '/api/scraper-repos', uploadRepo('events'));
    t.equal(duplicate.statusCode, 409, 'a taken slug');
    t.equal(
      count(
        await db.pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
        select count(*)::int as n from scraper_repos where created_by = ${power.id}`),
      ),
      0,
      'nothing was stored',
    );
  });

  await t.test('level 3 owns at most 3 repos; admins are unlimited', async (t) => {
    for (const slug of ['t2', 't3']) {
      t.equal((await trustedApi('POST', '/api/scraper-repos', uploadRepo(slug))).statusCode, 201);
    }
    const over = await trustedApi('POST', '/api/scraper-repos', uploadRepo('t4'));
    t.equal(over.statusCode, 403, over.body);
    t.equal(over.json().code, 'SCRAPER_REPOS_QUOTA_EXCEEDED');
    for (const slug of ['a1', 'a2', 'a3', 'a4']) {
      t.equal((await adminApi('POST', '/api/scraper-repos', uploadRepo(slug))).statusCode, 201);
    }
  });

  await t.test("lists: paging, where and sort; the caller's own only, admins all", async (t) => {
    const own = await trustedApi('GET', '/api/scraper-repos?sort=-slug&limit=2');
    t.same(
      own.json().docs.map((d: { slug: string }) => d.slug),
      ['t3', 't2'],
    );
    t.match(own.json(), { totalDocs: 3, totalPages: 2, hasNextPage: true, nextPage: 2 });
    const filtered = await trustedApi(
      'GET',
      '/api/scraper-repos?where[syncStatus][equals]=pending&where[slug][like]=event',
    );
    t.same(
      filtered.json().docs.map((d: { slug: string }) => d.slug),
      ['events'],
    );
    t.equal((await powerApi('GET', '/api/scraper-repos')).json().totalDocs, 0);
    t.equal((await adminApi('GET', '/api/scraper-repos')).json().totalDocs, 7);
    const unknown = await trustedApi('GET', '/api/scraper-repos?where[code][equals]=x');
    t.equal(unknown.statusCode, 400, 'code is not a filter field');
    t.equal((await trustedApi('GET', '/api/scraper-repos?sort=password')).statusCode, 400);
  });

  await t.test("another user's repo is 404; a missing one too", async (t) => {
    t.equal((await powerApi('GET', `/api/scraper-repos/${repoId}`)).statusCode, 404);
    t.equal((await powerApi('PATCH', `/api/scraper-repos/${repoId}`, { name: 'mine' })).statusCode, 404);
    t.equal((await powerApi('DELETE', `/api/scraper-repos/${repoId}`)).statusCode, 404);
    const missing = await trustedApi('GET', '/api/scraper-repos/999999');
    t.equal(missing.statusCode, 404);
    t.equal(missing.json().code, 'DOCUMENT_NOT_FOUND');
    t.equal((await trustedApi('GET', '/api/scraper-repos/0')).statusCode, 400);
    t.equal((await trustedApi('GET', '/api/scraper-repos/abc')).statusCode, 400);
    t.equal((await adminApi('GET', `/api/scraper-repos/${repoId}`)).statusCode, 200, 'admins read all');
  });

  await t.test('updating a repo: a source change queues one sync, rapid edits collapse', async (t) => {
    const [t2] = (await trustedApi('GET', '/api/scraper-repos?where[slug][equals]=t2')).json().docs;
    await db.pool.query(sql.unsafe`delete from pgboss.job where name = 'scraper-repo-sync-job'`);
    await db.pool.query(sql.unsafe`update scraper_repos set sync_status = 'synced' where id = ${t2.id}`);

    const renamed = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, { name: 'Renamed' });
    t.equal(renamed.statusCode, 200, renamed.body);
    t.match(renamed.json(), { syncQueued: false, doc: { name: 'Renamed', syncStatus: 'synced' } });
    const same = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, { code: pythonRepo('print(1)') });
    t.match(same.json(), { syncQueued: false }, 'the same code is no change');
    t.equal(await syncJobs(t2.id), 0);
    for (const n of [2, 3, 4]) {
      const edit = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, {
        code: pythonRepo(`print(${n})`),
      });
      t.match(edit.json(), { syncQueued: true, doc: { syncStatus: 'pending' } });
    }
    t.equal(await syncJobs(t2.id), 1, 'three edits, one sync waiting');
    t.same((await trustedApi('GET', `/api/scraper-repos/${t2.id}`)).json().code, pythonRepo('print(4)'));

    const toGit = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, {
      sourceType: 'git',
      gitUrl: 'https://git.example.org/scrapers.git',
    });
    t.equal(toGit.statusCode, 200, toGit.body);
    t.match(toGit.json().doc, {
      sourceType: 'git',
      gitUrl: 'https://git.example.org/scrapers.git',
      gitBranch: 'main',
    });
    t.equal(toGit.json().doc.code, null);
    const branch = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, { gitBranch: 'release/2' });
    t.match(branch.json(), { syncQueued: true, doc: { gitBranch: 'release/2' } });
    const http = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, {
      gitUrl: 'http://git.example.org/x.git',
    });
    t.equal(http.statusCode, 400);
    t.equal(http.json().code, 'INVALID_GIT_URL');
    const mixed = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, {
      name: 'Half applied?',
      gitUrl: 'http://git.example.org/x.git',
    });
    t.equal(mixed.statusCode, 400);
    t.equal(
      (await trustedApi('GET', `/api/scraper-repos/${t2.id}`)).json().name,
      'Renamed',
      'a refused source leaves the name alone',
    );
    const code = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, { code: { 'a.py': '' } });
    t.equal(code.json().code, 'INVALID_SOURCE_FIELD', 'code on a git repo');
    const traversal = await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, {
      sourceType: 'upload',
      code: { '../../x': '' },
    });
    t.equal(traversal.statusCode, 400);
    t.equal((await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, { slug: 'events' })).statusCode, 409);
    t.equal(
      (await trustedApi('PATCH', `/api/scraper-repos/${t2.id}`, { createdBy: power.id })).statusCode,
      400,
    );
    t.equal(
      (await trustedApi('GET', `/api/scraper-repos/${t2.id}`)).json().gitBranch,
      'release/2',
      'refused edits changed nothing',
    );
  });

  await t.test('a catalog on a repo must be one the caller may write to', async (t) => {
    const mine = await trustedApi('POST', '/api/catalogs', { slug: 'scraped', title: 'Scraped' });
    const theirs = await powerApi('POST', '/api/catalogs', {
      slug: 'public',
      title: 'Public',
      isPublic: true,
    });
    const hidden = await powerApi('POST', '/api/catalogs', { slug: 'hidden', title: 'Hidden' });
    const [t3] = (await trustedApi('GET', '/api/scraper-repos?where[slug][equals]=t3')).json().docs;
    const ok = await trustedApi('PATCH', `/api/scraper-repos/${t3.id}`, { catalog: mine.json().doc.id });
    t.equal(ok.json().doc.catalog, mine.json().doc.id);
    t.equal(
      (await trustedApi('PATCH', `/api/scraper-repos/${t3.id}`, { catalog: theirs.json().doc.id }))
        .statusCode,
      403,
    );
    const invisible = await trustedApi('PATCH', `/api/scraper-repos/${t3.id}`, {
      catalog: hidden.json().doc.id,
    });
    t.equal(invisible.statusCode, 400);
    t.equal(invisible.json().code, 'INVALID_REFERENCE');
  });

  // The sync is the scrapers' only source: run it as the worker would.
  await syncScraperRepo(scrapers, repoId);
  const scraperList = await trustedApi('GET', `/api/scrapers?where[repo][equals]=${repoId}&sort=slug`);
  const [events, venues] = scraperList.json().docs as { id: number; slug: string }[];

  await t.test('scrapers: listed and read by the owner, made by the sync only', async (t) => {
    t.equal(scraperList.statusCode, 200, scraperList.body);
    t.same(
      scraperList.json().docs.map((d: { slug: string }) => d.slug),
      ['events', 'venues'],
    );
    const one = await trustedApi('GET', `/api/scrapers/${events?.id}`);
    t.match(one.json(), {
      repo: repoId,
      runtime: 'python',
      entrypoint: 'main.py',
      outputFile: 'data.csv',
      schedule: '0 * * * *',
      enabled: true,
      envVars: {},
      timeoutSecs: 300,
      memoryMb: 512,
      targetDataset: null,
      autoImport: false,
      reviewDuplicates: 'first-run',
      webhookEnabled: false,
      statistics: { totalRuns: 0, successRuns: 0, failedRuns: 0, lastRunAt: null, lastRunStatus: null },
    });
    t.equal((await trustedApi('GET', '/api/scrapers?where[schedule][exists]=true')).json().totalDocs, 1);
    t.equal((await powerApi('GET', `/api/scrapers/${events?.id}`)).statusCode, 404);
    t.equal((await powerApi('GET', '/api/scrapers')).json().totalDocs, 0);
    t.equal((await adminApi('GET', `/api/scrapers/${events?.id}`)).statusCode, 200);
    const create = await trustedApi('POST', '/api/scrapers', { name: 'x', slug: 'x', repo: repoId });
    t.equal(create.statusCode, 403);
    t.equal(create.json().code, 'SCRAPERS_FROM_MANIFEST');
    t.match(create.json().message, /scrapers\.yml/);
    t.equal((await adminApi('DELETE', `/api/scrapers/${events?.id}`)).statusCode, 403);
  });

  await t.test('scrapers: the user-set fields, and webhook tokens shown once', async (t) => {
    const dataset = await trustedApi('POST', '/api/datasets', {
      catalog: (await trustedApi('GET', '/api/catalogs?where[slug][equals]=scraped')).json().docs[0].id,
      slug: 'scraped-events',
      title: 'Scraped events',
    });
    const changed = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, {
      enabled: false,
      envVars: { API_BASE: 'https://example.org', PAGE_SIZE: '50' },
      targetDataset: dataset.json().doc.id,
      autoImport: true,
      reviewDuplicates: 'never',
    });
    t.equal(changed.statusCode, 200, changed.body);
    t.match(changed.json().doc, {
      enabled: false,
      envVars: { API_BASE: 'https://example.org', PAGE_SIZE: '50' },
      targetDataset: dataset.json().doc.id,
      autoImport: true,
      reviewDuplicates: 'never',
    });
    const sometimes = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, {
      reviewDuplicates: 'sometimes',
    });
    t.equal(sometimes.statusCode, 400, 'reviewDuplicates takes first-run, always or never');
    t.equal((await trustedApi('GET', `/api/scrapers/${events?.id}`)).json().reviewDuplicates, 'never');
    t.notOk('webhookToken' in changed.json());

    const on = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: true });
    t.equal(on.statusCode, 200, on.body);
    const token = on.json().webhookToken as string;
    t.match(token, /^[0-9a-f]{64}$/);
    t.equal(on.json().doc.webhookEnabled, true);
    const stored = await db.pool.oneFirst(sql.type(row(Type.Object({ h: Type.String() })))`
      select webhook_token_hash as h from scrapers where id = ${events?.id ?? 0}`);
    t.equal(stored, createHash('sha256').update(token).digest('hex'), 'only the hash is stored');
    const read = await trustedApi('GET', `/api/scrapers/${events?.id}`);
    t.notOk(read.body.includes(token), 'never shown again');
    t.notOk(read.body.includes(stored), 'nor its hash');
    const again = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: true });
    t.notOk('webhookToken' in again.json(), 'already on: no new token');

    const rotated = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { rotateWebhookToken: true });
    const second = rotated.json().webhookToken as string;
    t.match(second, /^[0-9a-f]{64}$/);
    t.not(second, token);
    t.equal(
      (await anonymous('POST', `/api/webhooks/trigger/${token}`)).statusCode,
      404,
      'the old token is dead',
    );
    const off = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: false });
    t.equal(off.json().doc.webhookEnabled, false);
    t.equal((await anonymous('POST', `/api/webhooks/trigger/${second}`)).statusCode, 404, 'disabled');
    const reEnabled = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, { webhookEnabled: true });
    const third = reEnabled.json().webhookToken as string;
    t.not(third, second, 'disable and enable rotates');
    const rotateOff = await trustedApi('PATCH', `/api/scrapers/${venues?.id}`, { rotateWebhookToken: true });
    t.equal(rotateOff.statusCode, 400, 'nothing to rotate');

    for (const [label, body] of [
      ['env name with a dash', { envVars: { 'BAD-NAME': 'x' } }],
      ['env value not a string', { envVars: { A: { nested: 'x' } } }],
      ['manifest field', { schedule: '* * * * *' }],
      ['unknown field', { webhookTokenHash: 'x' }],
      ['dataset id 0', { targetDataset: 0 }],
    ] as const) {
      const response = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, body);
      t.equal(response.statusCode, 400, `${label}: ${response.body}`);
    }
    const missingDataset = await trustedApi('PATCH', `/api/scrapers/${events?.id}`, {
      targetDataset: 999999,
    });
    t.equal(missingDataset.json().code, 'INVALID_REFERENCE');
    t.equal((await powerApi('PATCH', `/api/scrapers/${events?.id}`, { enabled: true })).statusCode, 404);
    t.equal((await trustedApi('PATCH', '/api/scrapers/999999', { enabled: true })).statusCode, 404);
    t.equal(
      (await trustedApi('GET', `/api/scrapers/${events?.id}`)).json().enabled,
      false,
      'refused edits changed nothing',
    );
    const byAdmin = await adminApi('PATCH', `/api/scrapers/${events?.id}`, { envVars: {} });
    t.same(byAdmin.json().doc.envVars, {}, 'admins manage every scraper');
  });

  await t.test('scraper runs: lists without logs, one run with them, cancel', async (t) => {
    const queue = async (scraperId: number) => {
      const run = await scrapers.runs.createQueued({
        scraperId,
        runId: crypto.randomUUID(),
        triggeredBy: 'manual',
        triggeredByUser: trusted.id,
        scheduledFor: null,
      });
      if (!run) throw new Error('no run');
      return run;
    };
    const done = await queue(events?.id ?? 0);
    await scrapers.runs.start(done.id);
    await scrapers.runs.finish(done.id, 'running', {
      status: 'success',
      exitCode: 0,
      durationMs: 1234,
      stdout: 'fetching <page 1>\n',
      stderr: 'warning: slow\n',
      error: null,
      errorCode: null,
      outputRows: 2,
      outputBytes: 40,
      resultFile: Buffer.from('title,date\nA,2026-01-01\n').toString('base64'),
    });
    const queued = await queue(venues?.id ?? 0);

    const list = await trustedApi('GET', '/api/scraper-runs?sort=-id');
    t.equal(list.statusCode, 200, list.body);
    t.same(
      list.json().docs.map((d: { id: number }) => d.id),
      [queued.id, done.id],
    );
    for (const doc of list.json().docs) {
      t.notOk('stdout' in doc || 'stderr' in doc || 'resultFile' in doc, 'no logs in lists');
    }
    const success = await trustedApi('GET', '/api/scraper-runs?where[status][equals]=success');
    t.same(
      success.json().docs.map((d: { id: number }) => d.id),
      [done.id],
    );
    t.equal(
      (await trustedApi('GET', `/api/scraper-runs?where[runId][equals]=${done.runId}`)).json().totalDocs,
      1,
    );
    const one = await trustedApi('GET', `/api/scraper-runs/${done.id}`);
    t.match(one.json(), {
      id: done.id,
      runId: done.runId,
      scraper: events?.id,
      repo: repoId,
      status: 'success',
      triggeredBy: 'manual',
      triggeredByUser: trusted.id,
      exitCode: 0,
      durationMs: 1234,
      outputRows: 2,
      stdout: 'fetching <page 1>\n',
      stderr: 'warning: slow\n',
      resultFile: Buffer.from('title,date\nA,2026-01-01\n').toString('base64'),
    });
    t.equal(
      (await trustedApi('GET', `/api/scrapers/${events?.id}`)).json().statistics.lastRunStatus,
      'success',
    );

    t.equal((await powerApi('GET', `/api/scraper-runs/${done.id}`)).statusCode, 404);
    t.equal((await powerApi('POST', `/api/scraper-runs/${queued.id}/cancel`)).statusCode, 404);
    t.equal((await powerApi('GET', '/api/scraper-runs')).json().totalDocs, 0);
    const cancel = await trustedApi('POST', `/api/scraper-runs/${queued.id}/cancel`);
    t.equal(cancel.statusCode, 200, cancel.body);
    t.match(cancel.json(), { cancelled: true, doc: { status: 'failed', errorCode: 'CANCELLED' } });
    const late = await trustedApi('POST', `/api/scraper-runs/${done.id}/cancel`);
    t.match(late.json(), { cancelled: false, doc: { status: 'success' } });
    t.equal((await trustedApi('POST', '/api/scraper-runs/999999/cancel')).statusCode, 404);
    const create = await trustedApi('POST', '/api/scraper-runs', { scraper: events?.id });
    t.equal(create.statusCode, 403);
    t.equal(create.json().code, 'RUNS_FROM_TRIGGERS');
  });

  await t.test("a run's import outcome: what its auto-import did, linked by its ingest file", async (t) => {
    const run = await scrapers.runs.createQueued({
      scraperId: events?.id ?? 0,
      runId: crypto.randomUUID(),
      triggeredBy: 'manual',
      triggeredByUser: trusted.id,
      scheduledFor: null,
    });
    if (!run) throw new Error('no run');
    t.equal((await trustedApi('GET', `/api/scraper-runs/${run.id}`)).json().import, null, 'no import yet');
    // Its auto-import, completed: one row new, one found stored already, one repeated in the file.
    const fileId = await completedScraperImport(db.pool, {
      internal: 1,
      external: 1,
      created: 1,
      updated: 0,
      duplicates: 2,
    });
    await scrapers.runs.recordImport(run.id, { ingestFileId: fileId });
    const outcome = {
      ingestFile: fileId,
      status: 'completed',
      rowsNew: 1,
      rowsUpdated: 0,
      rowsUnchanged: 1,
      reviewReasons: [],
    };
    t.same((await trustedApi('GET', `/api/scraper-runs/${run.id}`)).json().import, outcome);
    const listed = (await trustedApi('GET', `/api/scraper-runs?where[id][equals]=${run.id}`)).json().docs;
    t.same(listed[0]?.import, outcome, 'in lists too');
    const page = await trustedApi('GET', '/account/scrapers');
    t.equal(page.statusCode, 200);
    t.match(page.body, '1 new, 1 unchanged', '/account/scrapers shows what the import did');
    t.match(page.body, `href="/account/imports#import-${fileId}"`, 'and links to it');

    await db.pool.query(sql.unsafe`
      update ingest_files set status = 'needs-review' where id = ${fileId}`);
    await db.pool.query(sql.unsafe`
      update ingest_jobs set stage = 'needs-review', review_reasons = '["duplicate rate 67% over 50%: 2 of 3"]'
      where ingest_file_id = ${fileId}`);
    await db.pool.query(sql.unsafe`
      update ingest_job_stages set output = null, status = 'pending'
      where stage = 'create-events' and ingest_job_id in (select id from ingest_jobs where ingest_file_id = ${fileId})`);
    t.same(
      (await trustedApi('GET', `/api/scraper-runs/${run.id}`)).json().import,
      {
        ...outcome,
        status: 'needs-review',
        rowsNew: null,
        rowsUpdated: null,
        rowsUnchanged: null,
        reviewReasons: ['duplicate rate 67% over 50%: 2 of 3'],
      },
      'an import that waits says so, with why, and no rows yet',
    );
  });

  await t.test(
    'deleting a repo: refused while a scraper runs, then it goes with its scrapers and runs',
    async (t) => {
      const running = await scrapers.runs.createQueued({
        scraperId: events?.id ?? 0,
        runId: crypto.randomUUID(),
        triggeredBy: 'manual',
        triggeredByUser: trusted.id,
        scheduledFor: null,
      });
      await scrapers.runs.start(running?.id ?? 0);
      const refused = await trustedApi('DELETE', `/api/scraper-repos/${repoId}`);
      t.equal(refused.statusCode, 409, refused.body);
      t.equal(refused.json().code, 'SCRAPER_RUNNING');
      t.equal((await trustedApi('POST', `/api/scraper-runs/${running?.id}/cancel`)).json().cancelled, true);

      const deleted = await trustedApi('DELETE', `/api/scraper-repos/${repoId}`);
      t.equal(deleted.statusCode, 200, deleted.body);
      t.match(deleted.json(), { message: 'Deleted successfully.', doc: { id: repoId, slug: 'events' } });
      t.equal((await trustedApi('GET', `/api/scraper-repos/${repoId}`)).statusCode, 404);
      t.equal((await trustedApi('GET', `/api/scrapers?where[repo][equals]=${repoId}`)).json().totalDocs, 0);
      t.equal((await trustedApi('GET', '/api/scraper-runs')).json().totalDocs, 0);
      t.equal((await trustedApi('DELETE', `/api/scraper-repos/${repoId}`)).statusCode, 404);

      const freed = await trustedApi('POST', '/api/scraper-repos', uploadRepo('t4'));
      t.equal(freed.statusCode, 201, 'a deleted repo frees its place in the quota');
      const [a1] = (await adminApi('GET', '/api/scraper-repos?where[slug][equals]=t3')).json().docs;
      t.equal(
        (await adminApi('DELETE', `/api/scraper-repos/${a1.id}`)).statusCode,
        200,
        "admins delete anyone's repo",
      );
    },
  );
});

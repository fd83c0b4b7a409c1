import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { CODE_LIMITS } from '../../../src/application/scrapers/scraper-collections.ts';
import { pythonRepo } from './scraper-fixtures.ts';
import { COLLECTIONS, count, scraperCollectionsSetup, TWO_SCRAPERS } from './scraper-collections-fixtures.ts';

// The scraper-repos collection over HTTP, on a real database: every route, each access level
// (anonymous, level 2, level 3 with its quota, another user, admin), the feature flag, and hostile
// bodies. Scrapers and runs: scraper-collections.test.ts.

t.test('scraper repos API', async (t) => {
  const {
    app,
    db,
    login,
    admin,
    adminApi,
    trusted,
    trustedApi,
    power,
    powerApi,
    regularApi,
    anonymous,
    uploadRepo,
    syncJobs,
    createEventsRepo,
  } = await scraperCollectionsSetup(t);
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

  const { created, repoId } = await createEventsRepo();

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
});

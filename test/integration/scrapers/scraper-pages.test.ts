import t from 'tap';
import { Type } from 'typebox';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { accountsApp } from '../../helpers/accounts.ts';
import { testConfig } from '../../helpers/app.ts';
import { composeScraperDeps } from '../../helpers/compose.ts';
import { openBoss } from './scraper-fixtures.ts';

// The scraper pages of issue 29 §1 against what a browser would not send: every form goes through
// the API's use cases, so a refused input comes back as that use case's message (never a 5xx), a
// record of someone else is the 404 page, an env var's value is never written into a page, and a
// webhook's URL is answered on the page, never carried by a redirect.

const MANIFEST = 'scrapers:\n  - { name: Events, slug: events, entrypoint: main.py }\n';

/** The flash message a redirect carries. */
const flash = (answer: { headers: Record<string, unknown> }, kind: 'notice' | 'error') =>
  new URL(String(answer.headers.location), 'http://page').searchParams.get(kind);

/** A multipart body, as a browser sends a form with files. */
function multipart(fields: Record<string, string>, files: [string, Buffer][]) {
  const boundary = '----chronomap-test-boundary';
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields))
    parts.push(
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
  for (const [name, content] of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="files"; filename="${name}"\r\n` +
          'content-type: application/octet-stream\r\n\r\n',
      ),
      content,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

t.test('the scraper pages refuse what a form would not send, through the use cases', async (t) => {
  const { app, db, createUser, login, as } = await accountsApp(t);
  const scrapers = composeScraperDeps(testConfig(), db.pool, await openBoss(t, db));
  const admin = await createUser({ role: 'admin', trustLevel: 5 });
  await as(await login(admin))('PATCH', '/api/feature-flags', { enableScrapers: true });
  const owner = await createUser({ trustLevel: 3 });
  const other = await createUser({ trustLevel: 3 });
  const ownerToken = await login(owner);

  const session = async (token: string) => {
    const page = await app.inject({
      method: 'GET',
      url: '/account/scrapers/new',
      headers: { authorization: `Bearer ${token}` },
    });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const cookie = String(page.headers['set-cookie']).split(';')[0] ?? '';
    const headers = { authorization: `Bearer ${token}`, cookie };
    return {
      get: (url: string) => app.inject({ method: 'GET', url, headers }),
      post: (url: string, fields: Record<string, string> = {}) =>
        app.inject({
          method: 'POST',
          url,
          headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
        }),
      upload: (url: string, fields: Record<string, string>, files: [string, Buffer][]) => {
        const body = multipart({ _csrf: csrf, ...fields }, files);
        return app.inject({
          method: 'POST',
          url,
          headers: { ...headers, 'content-type': body.type },
          payload: body.payload,
        });
      },
    };
  };
  const me = await session(ownerToken);
  const them = await session(await login(other));

  // New repos: from files and from git, refused in words where the API refuses.
  const latin1 = await me.upload('/account/scrapers/repos', { name: 'Bytes', sourceType: 'upload' }, [
    ['main.py', Buffer.from([0x63, 0x61, 0x66, 0xe9])],
  ]);
  t.equal(latin1.statusCode, 303);
  t.match(flash(latin1, 'error'), /main\.py is not UTF-8 text/);
  const tooBig = await me.upload('/account/scrapers/repos', { name: 'Big', sourceType: 'upload' }, [
    ['a.py', Buffer.alloc(300 * 1024, 'a')],
    ['b.py', Buffer.alloc(300 * 1024, 'b')],
  ]);
  t.match(flash(tooBig, 'error'), /at most 524288 bytes in all/);
  const oneHuge = await me.upload('/account/scrapers/repos', { name: 'Huge', sourceType: 'upload' }, [
    ['a.py', Buffer.alloc(600 * 1024, 'a')],
  ]);
  t.equal(oneHuge.statusCode, 413, 'a file over the limit stops the upload');
  const noFiles = await me.upload('/account/scrapers/repos', { name: 'Empty', sourceType: 'upload' }, []);
  t.match(flash(noFiles, 'error'), /choose the files/);
  const plainHttp = await me.post('/account/scrapers/repos', {
    name: 'Git',
    sourceType: 'git',
    gitUrl: 'http://git.example.org/x.git',
  });
  t.match(flash(plainHttp, 'error'), /https/);
  const Count = row(Type.Object({ n: Type.Number() }));
  t.equal(
    await db.pool.oneFirst(sql.type(Count)`select count(*)::int as n from scraper_repos`),
    0,
    'none made',
  );

  const git = await me.post('/account/scrapers/repos', {
    name: 'From git',
    sourceType: 'git',
    gitUrl: 'https://git.example.org/me/scraper.git',
  });
  t.match(String(git.headers.location), /^\/account\/scrapers\/repos\/\d+\?notice=/);
  const gitPage = await me.get(String(git.headers.location));
  t.match(gitPage.body, /https:\/\/git\.example\.org\/me\/scraper\.git/);
  t.match(gitPage.body, /data-watch="\/api\/scraper-repos\/\d+"/, 'the page watches the sync');
  const gitId = Number(/repos\/(\d+)/.exec(String(git.headers.location))?.[1]);
  const moved = await me.post(`/account/scrapers/repos/${gitId}/edit`, { gitBranch: 'develop' });
  t.equal(flash(moved, 'notice'), 'Saved; reading scrapers.yml again.');
  const filesOfGit = await me.post(`/account/scrapers/repos/${gitId}/files`, { path: 'x.py', content: '' });
  t.match(flash(filesOfGit, 'error'), /push to its branch/);

  const created = await me.upload('/account/scrapers/repos', { name: 'Events', sourceType: 'upload' }, [
    ['scrapers.yml', Buffer.from(MANIFEST)],
    ['main.py', Buffer.from('print(1)\n')],
  ]);
  const repoId = Number(/repos\/(\d+)/.exec(String(created.headers.location))?.[1]);
  t.ok(repoId > 0, 'an upload repo');
  await syncScraperRepo(scrapers, repoId);
  const [scraper] = await scrapers.scrapers.listByRepo(repoId);
  if (!scraper) throw new Error('no scraper');
  const scraperUrl = `/account/scrapers/scrapers/${scraper.id}`;

  // Files: a path the domain refuses, a rename, a delete, CRLF from a textarea.
  for (const path of ['/etc/x', '../main.py', 'a\\b.py']) {
    const badPath = await me.post(`/account/scrapers/repos/${repoId}/files`, { path, content: 'x' });
    t.match(flash(badPath, 'error'), /is not allowed/, `the domain's path rule: ${path}`);
  }
  const renamed = await me.post(`/account/scrapers/repos/${repoId}/files`, {
    original: 'main.py',
    path: 'lib/main.py',
    content: 'print(2)\r\nprint(3)\r\n',
  });
  t.equal(flash(renamed, 'notice'), 'Saved lib/main.py. Reading scrapers.yml again.');
  t.same((await scrapers.repos.get(repoId))?.code, {
    'scrapers.yml': MANIFEST,
    'lib/main.py': 'print(2)\nprint(3)\n',
  });
  const deleted = await me.post(`/account/scrapers/repos/${repoId}/files/delete`, { path: 'lib/main.py' });
  t.match(flash(deleted, 'notice'), /^Deleted lib\/main\.py\./);
  const lastFile = await me.post(`/account/scrapers/repos/${repoId}/files/delete`, { path: 'scrapers.yml' });
  t.match(flash(lastFile, 'error'), /at least one file/, "the domain's rule: a repo keeps a file");

  // Settings and env vars: the API's rules, and values never in a page.
  for (const [fields, message] of [
    [{ name: '1X', value: 'v' }, /letters, digits and _/],
    [{ name: 'LONG', value: 'v'.repeat(9000) }, /at most 8192 characters/],
    [{ name: '' }, /give the variable a name/],
  ] as const) {
    const answer = await me.post(`${scraperUrl}/env`, fields);
    t.match(flash(answer, 'error'), message, JSON.stringify(fields).slice(0, 60));
  }
  await me.post(`${scraperUrl}/env`, { name: 'API_KEY', value: 'secret-value-1234' });
  const proto = await me.post(`${scraperUrl}/env`, { name: '__proto__', value: 'still-a-name' });
  t.match(flash(proto, 'error'), /letters, digits and _/, 'a name that reaches the prototype is refused');
  t.same((await scrapers.scrapers.get(scraper.id))?.envVars, { API_KEY: 'secret-value-1234' });
  const scraperPage = await me.get(scraperUrl);
  t.equal(scraperPage.statusCode, 200);
  t.notMatch(scraperPage.body, /secret-value-1234|still-a-name/, 'no value in the page');
  t.match(scraperPage.body, /API_KEY[\s\S]*value hidden/);
  t.equal((await them.get(scraperUrl)).statusCode, 404, "someone else's scraper is the 404 page");
  t.equal((await them.post(`${scraperUrl}/env/remove`, { name: 'API_KEY' })).statusCode, 404);

  const wrongId = await me.post(`${scraperUrl}/settings`, { targetDataset: 'abc' });
  t.match(flash(wrongId, 'error'), /targetDataset must be chosen/);
  const foreign = await me.post(`${scraperUrl}/settings`, { targetDataset: '99999' });
  t.match(flash(foreign, 'error'), /dataset 99999 does not exist/);
  const review = await me.post(`${scraperUrl}/settings`, { reviewDuplicates: 'sometimes' });
  t.match(flash(review, 'error'), /reviewDuplicates must be one of/);
  const hook = await me.post(`${scraperUrl}/webhook`, { webhook: 'maybe' });
  t.match(flash(hook, 'error'), /on, off or rotate/);
  const rotateOff = await me.post(`${scraperUrl}/webhook`, { webhook: 'rotate' });
  t.match(flash(rotateOff, 'error'), /needs the webhook enabled/);
  const on = await me.post(`${scraperUrl}/webhook`, { webhook: 'on' });
  t.equal(on.statusCode, 200, 'the URL is answered on the page');
  t.equal(on.headers.location, undefined, 'never in a redirect');
  t.match(
    on.body,
    /data-field="webhook-url">http:\/\/localhost(:\d+)?\/api\/webhooks\/trigger\/[0-9a-f]{64}</,
  );

  // Ids that are not ids, and runs that are someone else's.
  for (const id of ['abc', '0', '99999999999999999999', '-1']) {
    t.equal((await me.get(`/account/scrapers/runs/${id}`)).statusCode, 404, `run id ${id}`);
    t.equal((await me.post(`/account/scrapers/runs/${id}/stop`)).statusCode, 404, `stop ${id}`);
  }
  const triggered = await me.post(`${scraperUrl}/run`);
  const runUrl = String(triggered.headers.location).split('?')[0] ?? '';
  t.match(runUrl, /^\/account\/scrapers\/runs\/\d+$/);
  t.match((await me.get(runUrl)).body, /Stop run/);
  t.equal((await them.post(`${runUrl}/stop`)).statusCode, 404);
  const stopped = await me.post(`${runUrl}/stop`);
  t.equal(flash(stopped, 'notice'), 'Run stopped.');
  const again = await me.post(`${runUrl}/stop`);
  t.equal(flash(again, 'notice'), 'The run had already finished.');
  t.notMatch((await me.get(runUrl)).body, /Stop run/);

  // A return path elsewhere is dropped.
  const sync = await me.post(`/account/scrapers/repos/${repoId}/sync`, { back: '//evil.example/x' });
  t.equal(String(sync.headers.location).split('?')[0], '/account/scrapers');
  const syncBack = await me.post(`/account/scrapers/repos/${repoId}/sync`, {
    back: `/account/scrapers/repos/${repoId}`,
  });
  t.equal(String(syncBack.headers.location).split('?')[0], `/account/scrapers/repos/${repoId}`);
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { ingestApp, signIn } from '../../fixtures/ingest/client.ts';

// The pages with browser code (the wizard, My imports, scheduled imports, the admin's Imports)
// load it as ES modules from web/account/, served by the service, and their Content-Security-Policy
// allows scripts of this origin only: no inline code, no hashes of inline code, no eval. The data a
// script needs is a JSON data block, never code.

const PAGES = [
  { url: '/account/imports/new', admin: false },
  { url: '/account/imports', admin: false },
  { url: '/account/scheduled-imports', admin: false },
  { url: '/dashboard/ingest', admin: true },
];

/** The directives of a Content-Security-Policy header by name. */
function directives(csp: unknown): Map<string, string> {
  return new Map(
    String(csp)
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name as string, values.join(' ')]),
  );
}

t.test('the pages load their scripts as modules of this origin, and allow nothing inline', async (t) => {
  const { app, db, user } = await ingestApp(t, {}, false);
  const admin = await signIn(app, db.pool, { role: 'admin' });
  const loaded = new Set<string>();
  for (const { url, admin: asAdmin } of PAGES) {
    const page = await app.inject({
      url,
      headers: { authorization: `Bearer ${asAdmin ? admin.token : user.token}` },
    });
    t.equal(page.statusCode, 200, url);
    const csp = directives(page.headers['content-security-policy']);
    t.equal(csp.get('default-src'), "'none'", `${url}: nothing but what is named`);
    t.equal(csp.get('script-src'), "'self'", `${url}: scripts of this origin only`);
    t.notMatch(String(page.headers['content-security-policy']), /sha256-|unsafe-eval/, `${url}: no hashes`);

    const tags = [...page.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    t.ok(tags.length > 0, `${url} has scripts`);
    for (const [tag, attributes = '', content = ''] of tags) {
      const module = /^ type="module" src="(\/account\/assets\/[a-z-]+\.js)"$/.exec(attributes);
      if (module?.[1]) {
        t.equal(content, '', `${url}: ${tag} has no inline code`);
        loaded.add(module[1]);
      } else {
        t.match(
          attributes,
          /^ id="[a-z-]+" type="application\/json"$/,
          `${url}: ${tag.slice(0, 80)} is data`,
        );
        t.doesNotThrow(() => JSON.parse(content), `${url}: its data is JSON`);
      }
    }
  }
  t.same(
    [...loaded].sort(),
    [
      '/account/assets/import-wizard.js',
      '/account/assets/ingest-progress.js',
      '/account/assets/scheduled-import-preview.js',
    ],
    'each script is loaded by a page',
  );

  for (const url of loaded) {
    const script = await app.inject({ url });
    t.equal(script.statusCode, 200, `${url} answers, to anyone`);
    t.match(script.headers['content-type'], /^text\/javascript; charset=utf-8/, `${url} is JavaScript`);
    t.equal(script.headers['x-content-type-options'], 'nosniff');
    t.equal(script.body, readFileSync(path.join(projectRoot, 'web', 'account', path.basename(url)), 'utf8'));
    const again = await app.inject({ url, headers: { 'if-none-match': String(script.headers.etag) } });
    t.equal(again.statusCode, 304, `${url}: a browser that has it keeps it`);
  }
  const elsewhere = await app.inject({ url: '/account/assets/tsconfig.json' });
  t.equal(elsewhere.statusCode, 404, 'only the named scripts are served');
});

t.test("the progress script's data: the statuses after which it stops", async (t) => {
  const { app, user } = await ingestApp(t, {}, false);
  const page = await app.inject({
    url: '/account/imports',
    headers: { authorization: `Bearer ${user.token}` },
  });
  const block = /<script id="ingest-progress-settings" type="application\/json">([\s\S]*?)<\/script>/.exec(
    page.body,
  );
  t.same(JSON.parse(block?.[1] ?? 'null'), { settled: ['completed', 'failed', 'partial', 'needs-review'] });
});

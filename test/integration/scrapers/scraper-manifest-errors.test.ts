import t from 'tap';
import { createScraperRepo } from '../../../src/application/scrapers/create-scraper-repo.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { testDatabase } from '../../helpers/database.ts';
import { createUser, scraperDeps } from './scraper-fixtures.ts';

// Every kind of manifest error, each in a repo of its own, through the real sync (yaml parser,
// croner, the repo and scraper stores): the repo ends `failed`, `lastSyncError` names the problem
// with its path, and no scraper is created.

const ok = '{ name: Ok, slug: ok, entrypoint: main.py }';
const CASES: [kind: string, manifest: string | null, lastSyncError: string | RegExp][] = [
  ['no manifest in the repo', null, 'scrapers.yml: not found at the repo root'],
  [
    'YAML syntax',
    'scrapers:\n  - { name: [unclosed\n',
    /^scrapers\.yml: invalid YAML \(line \d+, column \d+\)/,
  ],
  ['YAML alias', `x: &a [1]\nscrapers: *a\n`, /^scrapers\.yml: .*alias/i],
  ['duplicate key', `scrapers: [${ok}]\nscrapers: [${ok}]\n`, /^scrapers\.yml: .*(duplicate|unique)/i],
  ['not a mapping', '- a\n- b\n', '(root): the manifest must be a mapping with a "scrapers" list'],
  ['scrapers missing', 'defaults: { runtime: node }\n', 'scrapers: is required'],
  ['scrapers empty', 'scrapers: []\n', 'scrapers: must declare at least one scraper'],
  [
    'unknown top-level field',
    `scrapers: [${ok}]\nversion: 2\n`,
    'version: unknown field (expected scrapers, defaults)',
  ],
  [
    'defaults runtime',
    `defaults: { runtime: ruby }\nscrapers: [${ok}]\n`,
    'defaults.runtime: must be "python" or "node"',
  ],
  [
    'defaults limits',
    `defaults: { limits: { timeout: 4000, memory: 32, cpu: 2 } }\nscrapers: [${ok}]\n`,
    'defaults.limits.cpu: unknown field (expected timeout, memory)\n' +
      'defaults.limits.timeout: must be from 10 to 3600 seconds (got 4000)\n' +
      'defaults.limits.memory: must be from 64 to 4096 MB (got 32)',
  ],
  ['name missing', 'scrapers: [{ slug: a, entrypoint: a.py }]\n', 'scrapers[0].name: is required'],
  [
    'name too long',
    `scrapers: [{ name: ${'n'.repeat(256)}, slug: a, entrypoint: a.py }]\n`,
    'scrapers[0].name: must be at most 255 characters',
  ],
  [
    'slug pattern',
    'scrapers: [{ name: A, slug: Not_OK, entrypoint: a.py }]\n',
    'scrapers[0].slug: may contain only lowercase letters, digits and hyphens',
  ],
  [
    'slug too long',
    `scrapers: [{ name: A, slug: ${'s'.repeat(129)}, entrypoint: a.py }]\n`,
    'scrapers[0].slug: must be at most 128 characters',
  ],
  ['slug twice', `scrapers: [${ok}, ${ok}]\n`, 'scrapers[1].slug: "ok" is already used by scrapers[0]'],
  [
    'runtime',
    'scrapers: [{ name: A, slug: a, entrypoint: a.rb, runtime: ruby }]\n',
    'scrapers[0].runtime: must be "python" or "node"',
  ],
  ['entrypoint missing', 'scrapers: [{ name: A, slug: a }]\n', 'scrapers[0].entrypoint: is required'],
  [
    'entrypoint with ..',
    'scrapers: [{ name: A, slug: a, entrypoint: lib/../../a.py }]\n',
    'scrapers[0].entrypoint: must not contain ".."',
  ],
  [
    'absolute entrypoint',
    'scrapers: [{ name: A, slug: a, entrypoint: /a.py }]\n',
    'scrapers[0].entrypoint: must be relative to the repository root (no leading "/")',
  ],
  [
    'output',
    'scrapers: [{ name: A, slug: a, entrypoint: a.py, output: ../data.csv }]\n',
    'scrapers[0].output: must be a plain file name in /output (letters, digits, . _ -; no folders)',
  ],
  [
    'output in a folder',
    'scrapers: [{ name: A, slug: a, entrypoint: a.py, output: out/data.csv }]\n',
    'scrapers[0].output: must be a plain file name in /output (letters, digits, . _ -; no folders)',
  ],
  [
    'six-field cron',
    'scrapers: [{ name: A, slug: a, entrypoint: a.py, schedule: "0 0 6 * * *" }]\n',
    'scrapers[0].schedule: must be a five-field cron expression (got 6 fields)',
  ],
  [
    'invalid cron',
    'scrapers: [{ name: A, slug: a, entrypoint: a.py, schedule: "61 * * * *" }]\n',
    /^scrapers\[0\]\.schedule: is not a valid cron expression: .*minute/,
  ],
  [
    'limits out of range',
    'scrapers: [{ name: A, slug: a, entrypoint: a.py, limits: { timeout: 9, memory: 4097 } }]\n',
    'scrapers[0].limits.timeout: must be from 10 to 3600 seconds (got 9)\n' +
      'scrapers[0].limits.memory: must be from 64 to 4096 MB (got 4097)',
  ],
  [
    'limits not integers',
    'scrapers: [{ name: A, slug: a, entrypoint: a.py, limits: { timeout: 30.5, memory: lots } }]\n',
    'scrapers[0].limits.timeout: must be an integer (seconds)\nscrapers[0].limits.memory: must be an integer (MB)',
  ],
  [
    'unknown scraper field',
    'scrapers: [{ name: A, slug: a, entrypoint: a.py, schedlue: "0 6 * * *" }]\n',
    /^scrapers\[0\]\.schedlue: unknown field/,
  ],
];

t.test('each kind of manifest error fails the sync with its path and creates no scraper', async (t) => {
  const db = await testDatabase(t);
  const deps = await scraperDeps(t, db);
  // Level 5: no repos quota, so every case gets a repo of its own.
  const owner = await createUser(db.pool, 5);
  for (const [index, [kind, manifest, expected]] of CASES.entries()) {
    const code: Record<string, string> = { 'main.py': 'print(1)\n' };
    if (manifest !== null) code['scrapers.yml'] = manifest;
    const repo = await createScraperRepo(deps, owner, {
      name: kind,
      slug: `case-${index}`,
      sourceType: 'upload',
      code,
    });
    t.match(await syncScraperRepo(deps, repo.id), { status: 'failed' }, kind);
    const failed = await deps.repos.get(repo.id);
    t.equal(failed?.syncStatus, 'failed', kind);
    if (typeof expected === 'string') t.equal(failed?.lastSyncError, expected, kind);
    else t.match(failed?.lastSyncError, expected, kind);
    t.same(await deps.scrapers.listByRepo(repo.id), [], `${kind}: no scraper`);
  }
});

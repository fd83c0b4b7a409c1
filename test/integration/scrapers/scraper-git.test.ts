import t from 'tap';
import { startGitServer } from '../../../runner/test/support/git-server.ts';
import { gitManifestReader, isPublicAddress } from '../../../src/adapters/scrapers/git-manifest-reader.ts';
import { createScraperRepo } from '../../../src/application/scrapers/create-scraper-repo.ts';
import { syncScraperRepo } from '../../../src/application/scrapers/sync-scraper-repo.ts';
import { ManifestUnreadableError } from '../../../src/domain/scrapers/errors.ts';
import { testDatabase } from '../../helpers/database.ts';
import { createUser, scraperDeps, startRealRunner } from './scraper-fixtures.ts';
import { executeScraperRun } from '../../../src/application/scrapers/execute-scraper-run.ts';
import { triggerScraperRun } from '../../../src/application/scrapers/trigger-scraper-run.ts';
import { yamlManifestSource } from '../../../src/adapters/scrapers/yaml-manifest-source.ts';

// A git repo served over HTTPS on loopback (git http-backend behind a node https server with a
// throw-away certificate): the manifest of a git repo is read by a blob-less shallow clone.

const MANIFEST =
  'scrapers:\n  - { name: From git, slug: from-git, entrypoint: main.py, schedule: "0 6 * * *" }\n';

// The runner's test git host (runner/test/support/git-server.ts) serves the repos.
const gitServer = await startGitServer();
t.teardown(() => gitServer.close());
process.env.GIT_SSL_CAINFO = gitServer.caFile;
gitServer.addRepo('scrapers', {
  'scrapers.yml': MANIFEST,
  'main.py': 'from chronomap.scraper import output\noutput.write_row({"from": "git"})\noutput.save()\n',
  'big.bin': 'x'.repeat(200_000),
});
gitServer.addRepo('empty', { 'README.md': 'no manifest here\n' });
const base = gitServer.url;

t.test('the manifest of a git repo is read over https with the loopback test flag', async (t) => {
  const read = gitManifestReader({ allowLoopback: true });
  t.equal(await read(`${base}/scrapers.git`, 'main'), MANIFEST);
  await t.rejects(read(`${base}/empty.git`, 'main'), {
    constructor: ManifestUnreadableError,
    message: /scrapers\.yml: not found/,
  });
  await t.rejects(read(`${base}/scrapers.git`, 'no-such-branch'), {
    message: /git clone .* \(branch no-such-branch\) failed/,
  });
});

t.test('without the flag loopback and private hosts are refused before git runs', async (t) => {
  const read = gitManifestReader();
  await t.rejects(read(`${base}/scrapers.git`, 'main'), { message: /non-public address; refused/ });
  await t.rejects(read('https://localhost/x.git', 'main'), { message: /non-public address/ });
  await t.rejects(read('https://10.1.2.3/x.git', 'main'), { message: /non-public address/ });
  await t.rejects(read('http://example.org/x.git', 'main'), { message: /https:\/\/ only/ });
  await t.rejects(read('https://no-such-host.invalid/x.git', 'main'), { message: /does not resolve/ });
  for (const address of [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '0.0.0.0',
  ]) {
    t.notOk(isPublicAddress(address), address);
  }
  for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
    t.ok(isPublicAddress(address), address);
});

t.test('a git repo is synced from its manifest and run by the real runner, which clones it', async (t) => {
  const db = await testDatabase(t);
  const runner = await startRealRunner(t, {
    SCRAPER_ALLOW_LOOPBACK_GIT: 'true',
    GIT_SSL_CAINFO: gitServer.caFile,
  });
  const deps = await scraperDeps(t, db, {
    manifests: yamlManifestSource(gitManifestReader({ allowLoopback: true })),
    runner: runner.client,
  });
  const owner = await createUser(db.pool, 3);
  const repo = await createScraperRepo(deps, owner, {
    name: 'Git',
    slug: 'git',
    sourceType: 'git',
    gitUrl: `${base}/scrapers.git`,
    gitBranch: 'main',
  });
  t.match(await syncScraperRepo(deps, repo.id), { status: 'synced', result: { created: ['from-git'] } });
  const [scraper] = await deps.scrapers.listByRepo(repo.id);
  t.match(scraper, { slug: 'from-git', schedule: '0 6 * * *' });
  const { run } = await triggerScraperRun(deps, owner, scraper?.id ?? 0);
  t.match(await executeScraperRun(deps, run.id), { outcome: 'finished', status: 'success' });
  const done = await deps.runs.get(run.id);
  t.equal(Buffer.from(done?.resultFile ?? '', 'base64').toString('utf8'), 'from\r\ngit\r\n');
});

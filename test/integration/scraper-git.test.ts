import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { gitManifestReader, isPublicAddress } from '../../src/adapters/scrapers/git-manifest-reader.ts';
import { createScraperRepo } from '../../src/application/scrapers/create-scraper-repo.ts';
import { syncScraperRepo } from '../../src/application/scrapers/sync-scraper-repo.ts';
import { ManifestUnreadableError } from '../../src/domain/scrapers/errors.ts';
import { testDatabase } from '../helpers/database.ts';
import { createUser, scraperDeps, startRealRunner } from './scraper-fixtures.ts';
import { executeScraperRun } from '../../src/application/scrapers/execute-scraper-run.ts';
import { triggerScraperRun } from '../../src/application/scrapers/trigger-scraper-run.ts';
import { yamlManifestSource } from '../../src/adapters/scrapers/yaml-manifest-source.ts';

// A git repo served over HTTPS on loopback (git http-backend behind a node https server with a
// throw-away certificate): the manifest of a git repo is read by a blob-less shallow clone.

const MANIFEST =
  'scrapers:\n  - { name: From git, slug: from-git, entrypoint: main.py, schedule: "0 6 * * *" }\n';

const work = mkdtempSync(path.join(tmpdir(), 'chronomap-git-test-'));
t.teardown(() => rmSync(work, { recursive: true, force: true }));
const run = (args: string[], cwd: string) =>
  execFileSync('git', args, {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, GIT_CONFIG_NOSYSTEM: '1' },
  });

function makeRepo(name: string, files: Record<string, string>) {
  const source = path.join(work, `${name}-src`);
  run(['init', '-q', '-b', 'main', source], work);
  for (const [file, content] of Object.entries(files)) writeFileSync(path.join(source, file), content);
  run(['add', '.'], source);
  run(['-c', 'user.name=t', '-c', 'user.email=t@example.org', 'commit', '-q', '-m', 'init'], source);
  run(['clone', '-q', '--bare', source, path.join(work, 'served', `${name}.git`)], work);
  run(['config', 'uploadpack.allowFilter', 'true'], path.join(work, 'served', `${name}.git`));
}
makeRepo('scrapers', {
  'scrapers.yml': MANIFEST,
  'main.py': 'from chronomap.scraper import output\noutput.write_row({"from": "git"})\noutput.save()\n',
  'big.bin': 'x'.repeat(200_000),
});
makeRepo('empty', { 'README.md': 'no manifest here\n' });

const keyFile = path.join(work, 'key.pem');
const certFile = path.join(work, 'cert.pem');
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ],
  { stdio: 'ignore' },
);
process.env.GIT_SSL_CAINFO = certFile;

const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
  const url = new URL(req.url ?? '/', 'https://127.0.0.1');
  const backend = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: path.join(work, 'served'),
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: url.pathname,
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      REMOTE_ADDR: '127.0.0.1',
    },
  });
  req.pipe(backend.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  backend.stdout.on('data', (chunk: Buffer) => {
    if (headersDone) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString().split('\r\n')) {
      const [name, ...rest] = line.split(':');
      const value = rest.join(':').trim();
      if (name?.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else if (name) res.setHeader(name, value);
    }
    res.writeHead(status);
    res.write(head.subarray(end + 4));
  });
  backend.on('close', () => res.end());
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
t.teardown(() => server.close());
const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

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
  const runner = await startRealRunner(t, { SCRAPER_ALLOW_LOOPBACK_GIT: 'true', GIT_SSL_CAINFO: certFile });
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

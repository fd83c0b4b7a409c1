import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { Type } from 'typebox';
import { startGitServer } from '../../../runner/test/support/git-server.ts';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import { postgresUserStore } from '../../../src/adapters/postgres/accounts/user-store.ts';
import { scryptPasswordHasher } from '../../../src/adapters/security/scrypt-password-hasher.ts';
import { policyFile, TEST_SESSION_SECRET } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';
import { startOutsideSite } from '../../helpers/outside-site.ts';
import { RUNNER_KEY, startRealRunner, switchScrapers } from './scraper-fixtures.ts';

// The tutorial of docs/scrapers.md, run as written: its `sh` blocks, in order, in one bash, against
// the whole service listening on loopback (HTTP API and workers), the real runner with real podman,
// a web site to scrape and an HTTPS git host. The doc's "your values" block names the variables;
// the test gives them values of its own.

const doc = readFileSync(path.join(projectRoot, 'docs', 'scrapers.md'), 'utf8');
const tutorial = doc.slice(
  doc.indexOf('\n## Tutorial'),
  doc.indexOf('\n## ', doc.indexOf('\n## Tutorial') + 1),
);
const fenced = [...tutorial.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map((m) => ({
  info: m[1] ?? '',
  body: m[2] ?? '',
}));
const commands = fenced.filter((block) => block.info === 'sh').map((block) => block.body);
const setup = fenced.find((block) => block.info === 'sh setup')?.body ?? '';
const page = fenced.find((block) => block.info === 'html')?.body ?? '';
const settings = [...setup.matchAll(/^export (\w+)=/gm)].map((m) => m[1]);
// The output the doc shows (`text` blocks) after a command: each line of it, but "...", is in the
// output of the `sh` block before it.
const shownOutputs: { command: number; lines: string[] }[] = [];
for (const block of fenced) {
  if (block.info === 'text') {
    const command = fenced.slice(0, fenced.indexOf(block)).filter((b) => b.info === 'sh').length - 1;
    shownOutputs.push({ command, lines: block.body.split('\n').filter((line) => line && line !== '...') });
  }
}

t.test('the tutorial has its commands, the page it scrapes and the values it needs', async (t) => {
  t.ok(commands.length >= 10, `${commands.length} sh blocks`);
  t.ok(shownOutputs.length >= 3, 'and the output of some of them');
  t.match(
    commands[0],
    /^npx --yes --package "\$CHRONOMAP_URL\/scraper-helper\.tgz" chronomap-scraper init my-scraper$/m,
  );
  t.match(page, /<li class="event"/);
  t.same(settings, ['CHRONOMAP_URL', 'CHRONOMAP_EMAIL', 'CHRONOMAP_PASSWORD', 'SITE_URL', 'GIT_URL']);
});

t.test('every command of the tutorial, from init to events on the map', async (t) => {
  // The page of step 3, served where a scraper container can reach it (not on the host's loopback:
  // the sandbox firewall drops that, see test/helpers/outside-site.ts).
  const site = await startOutsideSite(t, { 'events.html': page });

  // The git host of step 11, with the empty repository the reader pushes to.
  const git = await startGitServer();
  t.teardown(() => git.close());
  const bare = path.join(path.dirname(git.caFile), 'repos', 'my-scraper.git');
  for (const args of [
    ['init', '-q', '--bare', '-b', 'main', bare],
    ['-C', bare, 'config', 'http.receivepack', 'true'],
    ['-C', bare, 'config', 'uploadpack.allowFilter', 'true'],
  ])
    t.equal(spawnSync('git', args).status, 0, `git ${args.join(' ')}`);
  // The main application's manifest reader trusts the host's certificate like the runner's clone.
  process.env.GIT_SSL_CAINFO = git.caFile;

  const runner = await startRealRunner(t, { SCRAPER_ALLOW_LOOPBACK_GIT: 'true', GIT_SSL_CAINFO: git.caFile });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'chronomap-tutorial-data-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { app, db } = await testApp(t, {
    workers: true,
    config: {
      scraperRunnerUrl: runner.url,
      scraperApiKey: RUNNER_KEY,
      scraperAllowLoopbackGit: true,
      sessionSecret: TEST_SESSION_SECRET,
      quotasFile: policyFile(t),
      dataDir,
    },
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  // What the tutorial asks of an admin: scrapers switched on, the reader at trust level 3.
  await switchScrapers(db.pool, true);
  const password = 'tutorial reader password';
  const reader = await postgresUserStore(db.pool).upsert({
    email: 'reader@example.org',
    passwordHash: await scryptPasswordHasher({ N: 1024 }).hash(password),
    role: 'user',
    trustLevel: 3,
  });

  // The first command is the real npx, fetching the helper package from this service's
  // /scraper-helper.tgz as on a fresh machine (no registry: the package has no dependencies).
  const home = mkdtempSync(path.join(tmpdir(), 'chronomap-tutorial-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));

  const values: Record<string, string> = {
    CHRONOMAP_URL: base,
    CHRONOMAP_EMAIL: 'reader@example.org',
    CHRONOMAP_PASSWORD: password,
    SITE_URL: `${site.url}/events.html`,
    GIT_URL: `${git.url}/my-scraper.git`,
  };
  const script = ['set -euo pipefail', ...commands.map((body, n) => `echo '@@ block ${n}'\n${body}`)].join(
    '\n',
  );
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd: home,
      env: {
        // Node 24 for npx, then Debian's python3 (scripts/setup installs its venv module) before
        // any other python3 on the PATH.
        PATH: `${path.join(projectRoot, 'node_modules', '.bin')}:/usr/bin:${process.env.PATH ?? '/bin'}`,
        HOME: home,
        GIT_SSL_CAINFO: git.caFile,
        npm_config_cache: path.join(home, '.npm'),
        npm_config_update_notifier: 'false',
        ...values,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const output = (n: number) => result.stdout.split(`@@ block ${n}\n`)[1]?.split('@@ block ')[0] ?? '';
  t.equal(result.code, 0, `the tutorial ran to its end\n${result.stdout}\n${result.stderr}`);

  for (const { command, lines } of shownOutputs) {
    for (const line of lines) t.ok(output(command).includes(line), `block ${command} printed ${line}`);
  }
  const block = (pattern: RegExp) => commands.findIndex((body) => pattern.test(body));
  t.match(output(block(/\.venv\/bin\/python scraper\.py/)), /saved 3 rows to \.\/data\.csv\n/);
  t.match(
    output(block(/\.venv\/bin\/python scraper\.py/)),
    'title,date,latitude,longitude\r\nOpen-air cinema,2026-07-04,52.5163,13.3777\r\n' +
      'Jazz in the park,2026-07-11,52.5076,13.3904\r\nNight market,2026-07-18,52.52,13.405\r\n',
    'the local run scraped the page',
  );
  t.same(JSON.parse(output(block(/slug: "my-scraper", sourceType: "upload"/))), {
    syncStatus: 'synced',
    lastSyncError: null,
  });
  const manual = JSON.parse(output(block(/scrapers\/\$SCRAPER\/run/)));
  t.match(manual, { status: 'success', outputRows: 3, ingestFile: Number, error: null });
  t.match(manual.stdout, /saved 3 rows to \/output\/data\.csv/, 'the same scraper ran in the sandbox');
  const events = output(block(/api\/v1\/events\?datasets=my-town-events/))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.same(events.slice(0, 3), [
    {
      title: 'Open-air cinema',
      eventTimestamp: '2026-07-04T00:00:00.000Z',
      location: { longitude: 13.3777, latitude: 52.5163 },
    },
    {
      title: 'Jazz in the park',
      eventTimestamp: '2026-07-11T00:00:00.000Z',
      location: { longitude: 13.3904, latitude: 52.5076 },
    },
    {
      title: 'Night market',
      eventTimestamp: '2026-07-18T00:00:00.000Z',
      location: { longitude: 13.405, latitude: 52.52 },
    },
  ]);
  const byTitle = (a: { title: string }, b: { title: string }) => a.title.localeCompare(b.title);
  t.same(
    events.slice(3).sort(byTitle),
    [
      { kind: 'event-point', title: 'Open-air cinema', at: [13.3777, 52.5163] },
      { kind: 'event-point', title: 'Jazz in the park', at: [13.3904, 52.5076] },
      { kind: 'event-point', title: 'Night market', at: [13.405, 52.52] },
    ].sort(byTitle),
    'the same events as points on the map',
  );
  t.same(JSON.parse(output(block(/sed -i/))), { schedule: '0 6 * * *' });
  t.same(JSON.parse(output(block(/webhookEnabled/))), { status: 'queued', triggeredBy: 'webhook' });
  t.same(JSON.parse(output(block(/git push/))), { status: 'success', outputRows: 3, error: null });

  // Every run the tutorial started ends; the webhook's run imported the same events again.
  const unfinished = () =>
    db.pool.oneFirst(sql.type(row(Type.Object({ count: Type.Number() })))`
      select count(*)::int as count from scraper_runs where status in ('queued', 'running')`);
  while ((await unfinished()) > 0) await new Promise((resolve) => setTimeout(resolve, 500));
  const runs = await db.pool.any(sql.type(
    row(Type.Object({ triggered_by: Type.String(), status: Type.String(), owner: Type.Number() })),
  )`
    select r.triggered_by, r.status, repo.created_by as owner from scraper_runs r
    join scrapers s on s.id = r.scraper_id join scraper_repos repo on repo.id = s.repo_id order by r.id`);
  t.same(runs, [
    { triggered_by: 'manual', status: 'success', owner: reader.id },
    { triggered_by: 'webhook', status: 'success', owner: reader.id },
    { triggered_by: 'manual', status: 'success', owner: reader.id },
  ]);
});

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { testApp } from '../../helpers/app.ts';

// Scraper onboarding on a machine with only Node and npm: the tutorial's first command, as
// docs/scrapers.md writes it, run by the real npx against the service's /scraper-helper.tgz (no
// registry, no checkout, a fresh npm cache), the Python project's local run as its README writes
// it (the served wheel, the real pip), and the Node scaffold's helper dependency installed by the
// real npm from the URL init wrote.

const tutorial = readFileSync(path.join(projectRoot, 'docs', 'scrapers.md'), 'utf8');
const firstCommand = /```sh\n(npx [^\n]+init my-scraper)\n/.exec(tutorial)?.[1] ?? '';

t.test('npx fetches the helper from the service and init writes a project', async (t) => {
  t.match(
    firstCommand,
    /^npx --yes --package "\$CHRONOMAP_URL\/scraper-helper\.tgz" chronomap-scraper init my-scraper$/,
  );
  const { app } = await testApp(t);
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  const home = mkdtempSync(path.join(tmpdir(), 'chronomap-onboarding-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const env = {
    PATH: `${path.join(projectRoot, 'node_modules', '.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    CHRONOMAP_URL: base,
    npm_config_cache: path.join(home, '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  };
  // Asynchronous: the service answering npx runs in this very process.
  const run = (command: string, cwd = home) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('bash', ['-c', command], { cwd, env, timeout: 120_000 });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  const init = await run(firstCommand);
  t.equal(init.status, 0, `${init.stdout}\n${init.stderr}`);
  for (const file of ['scrapers.yml', 'scraper.py', 'README.md', '.gitignore'])
    t.ok(existsSync(path.join(home, 'my-scraper', file)), file);

  // The Python project's README runs the starter with the wheel this service serves, in a venv of
  // Debian's python3 (first on the PATH: scripts/setup installs its venv module).
  const readme = readFileSync(path.join(home, 'my-scraper', 'README.md'), 'utf8');
  const localRun = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  t.match(localRun, `--no-index "${base}/scraper-helper-python/chronomap_scraper-`);
  const ran = await run(`PATH=/usr/bin:$PATH\nset -eu\n${localRun}`, path.join(home, 'my-scraper'));
  t.equal(ran.status, 0, `${ran.stdout}\n${ran.stderr}`);
  t.match(
    readFileSync(path.join(home, 'my-scraper', 'data.csv'), 'utf8'),
    /^title,date,location\r\nExample concert,/,
    'the starter ran with the served helper',
  );

  const node = await run(firstCommand.replace('init my-scraper', 'init my-node --runtime node'));
  t.equal(node.status, 0, node.stderr);
  const manifest = JSON.parse(readFileSync(path.join(home, 'my-node', 'package.json'), 'utf8'));
  t.equal(
    manifest.dependencies['@chronomap/scraper'],
    `${base}/scraper-helper.tgz`,
    'the helper comes from the service',
  );

  // The helper dependency installs as written (the scaffold's other dependencies are on the registry).
  const consumer = path.join(home, 'consumer');
  await run(`mkdir -p ${consumer}`);
  writeFileSync(
    path.join(consumer, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  const installed = await run(
    `npm install --no-audit --no-fund "${manifest.dependencies['@chronomap/scraper']}"`,
    consumer,
  );
  t.equal(installed.status, 0, installed.stderr);
  const used = await run(
    `node -e "import('@chronomap/scraper').then((m) => console.log(typeof m.Output))"`,
    consumer,
  );
  t.equal(used.stdout.trim(), 'function', used.stderr);
});

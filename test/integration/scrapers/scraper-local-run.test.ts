import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { testApp } from '../../helpers/app.ts';

// Running a scraper on one's own machine without a Chronomap checkout, as docs/scrapers.md's
// tutorial says (step 4): the Python helper installed by the real pip, in a venv of Debian's
// python3, from the wheel the service serves (no package index), then the tutorial's scraper run
// against the tutorial's page served on this machine's loopback, which a sandboxed run could
// not reach. The blocks run are the doc's own.

const doc = readFileSync(path.join(projectRoot, 'docs', 'scrapers.md'), 'utf8');
const blocks = [...doc.matchAll(/^```([^\n]*)\n([\s\S]*?)^```$/gm)].map((m) => ({
  info: m[1] ?? '',
  body: m[2] ?? '',
}));
const shBlock = (pattern: RegExp) => blocks.find((b) => b.info === 'sh' && pattern.test(b.body))?.body ?? '';
const writeScraper = shBlock(/^cat > scraper\.py/);
const runLocally = shBlock(/pip install/);
const ownMachine = blocks.find((b) => b.info === 'sh local')?.body ?? '';
const page = blocks.find((b) => b.info === 'html')?.body ?? '';
// The doc's example port, which the test replaces by one the system gives it.
const DOC_PAGE_ORIGIN = 'http://127.0.0.1:8000';
const CSV =
  'title,date,latitude,longitude\r\nOpen-air cinema,2026-07-04,52.5163,13.3777\r\n' +
  'Jazz in the park,2026-07-11,52.5076,13.3904\r\nNight market,2026-07-18,52.52,13.405\r\n';

function bash(script: string, cwd: string, env: Record<string, string>) {
  // Asynchronous: the service pip downloads from answers in this very process.
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], { cwd, env, timeout: 180_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test(
  'the tutorial has the local run, with the served wheel, and a run against a page on loopback',
  async (t) => {
    t.match(writeScraper, /from chronomap\.scraper import output/);
    t.match(runLocally, /^python3 -m venv \.venv$/m);
    t.match(runLocally, /--no-index "\$CHRONOMAP_URL\/scraper-helper-python\/[^"]+\.whl"/);
    t.notMatch(doc, /CHRONOMAP_SOURCE|PYTHONPATH/, 'no checkout of Chronomap is needed');
    t.match(ownMachine, `SITE_URL=${DOC_PAGE_ORIGIN}/events.html`);
    t.match(doc, /ConnectionRefusedError/, 'the doc says what a sandboxed run against loopback gets');
  },
);

t.test(
  'pip installs the served helper and the scraper runs locally against a page on loopback',
  async (t) => {
    const { app } = await testApp(t);
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    const site = createServer((request, response) => {
      if (request.url === '/events.html') response.writeHead(200, { 'content-type': 'text/html' }).end(page);
      else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise<void>((resolve) => site.close(() => resolve())));
    const siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;

    const home = mkdtempSync(path.join(tmpdir(), 'chronomap-local-run-'));
    t.teardown(() => rmSync(home, { recursive: true, force: true }));
    // Debian's python3, the one whose venv module scripts/setup installs, before any other on the
    // PATH; no PYTHONPATH, so the helper can only come from the venv.
    const env = { PATH: '/usr/bin:/bin', HOME: home, PIP_DISABLE_PIP_VERSION_CHECK: '1' };

    const local = await bash(`${writeScraper}\n${runLocally}`, home, {
      ...env,
      CHRONOMAP_URL: base,
      SITE_URL: `${siteOrigin}/events.html`,
    });
    t.equal(local.code, 0, `step 4 ran\n${local.stdout}\n${local.stderr}`);
    t.match(local.stdout, /saved 3 rows to \.\/data\.csv\n/);
    t.ok(local.stdout.endsWith(CSV), `the CSV of the page's events\n${local.stdout}`);
    const where = await bash(
      '.venv/bin/python -c "import chronomap.scraper as m; print(m.__file__)"',
      home,
      env,
    );
    t.match(where.stdout, `${home}/.venv/lib/`, 'the helper is the installed wheel');

    // The doc's block for a page on one's own machine: SITE_URL comes from the block alone.
    t.ok(ownMachine.includes(DOC_PAGE_ORIGIN));
    const own = await bash(ownMachine.replaceAll(DOC_PAGE_ORIGIN, siteOrigin), home, env);
    t.equal(own.code, 0, `${own.stdout}\n${own.stderr}`);
    t.equal(own.stdout, `saved 3 rows to ./data.csv\n${CSV}`);
  },
);

t.test('the wheel is served under its own file name only', async (t) => {
  const { app } = await testApp(t);
  const name = /scraper-helper-python\/([^"]+\.whl)"/.exec(runLocally)?.[1] ?? '';
  const wheel = await app.inject({ url: `/scraper-helper-python/${name}` });
  t.equal(wheel.statusCode, 200);
  t.equal(wheel.headers['content-type'], 'application/zip');
  t.equal(wheel.rawPayload.subarray(0, 4).toString('latin1'), 'PK\u0003\u0004', 'a zip file');
  const other = await app.inject({ url: '/scraper-helper-python/chronomap_scraper-0.0.1-py3-none-any.whl' });
  t.equal(other.statusCode, 404);
  t.match(other.json(), { error: 'Not Found', message: new RegExp(name.replaceAll('.', '\\.')) });
});

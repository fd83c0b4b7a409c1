import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// Where a Node scaffold's `npm install` gets this package, which is not on the npm registry: the
// Chronomap named in CHRONOMAP_URL serves it; without one, this copy on disk.

const bin = fileURLToPath(new URL('../bin/chronomap-scraper.js', import.meta.url));
const here = fileURLToPath(new URL('../', import.meta.url)).replace(/\/+$/, '');

function dependencyOf(env: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'chronomap-helper-dep-'));
  try {
    const run = spawnSync(process.execPath, [bin, 'init', join(dir, 'p'), '--runtime', 'node'], {
      env: { PATH: process.env.PATH ?? '', ...env },
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(run.stderr);
    return JSON.parse(readFileSync(join(dir, 'p', 'package.json'), 'utf8')).dependencies[
      '@chronomap/scraper'
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('from the Chronomap named in CHRONOMAP_URL, else this copy on disk', async (t) => {
  t.equal(
    dependencyOf({ CHRONOMAP_URL: 'https://chronomap.example.org/' }),
    'https://chronomap.example.org/scraper-helper.tgz',
  );
  t.equal(dependencyOf({}), `file:${here}`);
});

// A project made by `npx @chronomap/scraper init` runs through the runner unchanged.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { csvRecords, makeHarness } from './support/harness.ts';

const initBin = fileURLToPath(new URL('../helpers/node/bin/chronomap-scraper.js', import.meta.url));
const h = makeHarness();
t.teardown(() => h.close());

for (const runtime of ['python', 'node'] as const) {
  t.test(`the generated ${runtime} project succeeds`, async (t) => {
    const parent = mkdtempSync(join(tmpdir(), 'scaffold-'));
    t.teardown(() => rmSync(parent, { recursive: true, force: true }));
    const dir = join(parent, `starter-${runtime}`);
    const made = spawnSync(process.execPath, [initBin, 'init', dir, '--runtime', runtime], {
      encoding: 'utf8',
    });
    t.equal(made.status, 0, made.stderr);
    const manifest = readFileSync(join(dir, 'scrapers.yml'), 'utf8');
    const entrypoint = /entrypoint: (\S+)/.exec(manifest)?.[1] ?? '';
    const output = /output: (\S+)/.exec(manifest)?.[1] ?? '';
    const code = Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
    const { body } = await h.run({ runtime, entrypoint, output_file: output, code });
    t.equal(body.status, 'success', `${body.error} ${body.stderr}`);
    t.same(csvRecords(body)[0], ['title', 'date', 'location']);
    t.equal(body.output?.rows, 2);
    t.match(body.stdout, /saved 2 rows to \/output\/data.csv/);
  });
}

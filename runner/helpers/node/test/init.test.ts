// The `init` scaffolding command.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const bin = fileURLToPath(new URL('../bin/chronomap-scraper.js', import.meta.url));
const init = (...args: string[]) => spawnSync(process.execPath, [bin, 'init', ...args], { encoding: 'utf8' });

t.test('python is the default runtime', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'init-')), 'My Events!');
  const r = init(dir);
  t.equal(r.status, 0, r.stderr);
  t.same(readdirSync(dir).sort(), ['.gitignore', 'README.md', 'scraper.py', 'scrapers.yml']);
  const manifest = readFileSync(join(dir, 'scrapers.yml'), 'utf8');
  t.match(
    manifest,
    /- name: "My Events!"\n\s+slug: my-events\n\s+runtime: python\n\s+entrypoint: scraper.py\n\s+output: data.csv/,
  );
  t.match(readFileSync(join(dir, 'scraper.py'), 'utf8'), /from chronomap\.scraper import output/);
  t.match(readFileSync(join(dir, 'README.md'), 'utf8'), /output\.write_row/);
  t.notMatch(readFileSync(join(dir, 'README.md'), 'utf8'), /\{\{/);
  t.match(readFileSync(join(dir, '.gitignore'), 'utf8'), /node_modules\//);
});

t.test('--runtime node writes a Node starter', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'init-')), 'node-one');
  const r = init(dir, '--runtime', 'node');
  t.equal(r.status, 0, r.stderr);
  t.same(readdirSync(dir).sort(), ['.gitignore', 'README.md', 'package.json', 'scraper.mjs', 'scrapers.yml']);
  t.match(readFileSync(join(dir, 'scrapers.yml'), 'utf8'), /runtime: node\n\s+entrypoint: scraper.mjs/);
  t.match(readFileSync(join(dir, 'scraper.mjs'), 'utf8'), /from '@chronomap\/scraper'/);
  t.equal(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name, 'node-one');
});

t.test('the Python starter runs locally with the helper on the path', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'init-')), 'local');
  init(dir);
  const helper = fileURLToPath(new URL('../../python', import.meta.url));
  const r = spawnSync('python3', ['scraper.py'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: helper, CHRONOMAP_OUTPUT_DIR: dir },
  });
  t.equal(r.status, 0, r.stderr);
  t.match(readFileSync(join(dir, 'data.csv'), 'utf8'), /^title,date,location\r\n/);
});

t.test('the README links no site and its local run works in this checkout', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'init-')), 'readme');
  init(dir);
  const readme = readFileSync(join(dir, 'README.md'), 'utf8');
  t.notMatch(readme, /\]\(https?:/, 'no links: the guide is a file of the Chronomap repository');
  t.match(readme, /`docs\/scrapers\.md` in the\nChronomap repository/);
  const run = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  t.match(run, `PYTHONPATH=${fileURLToPath(new URL('../../python', import.meta.url)).replace(/\/+$/, '')} `);
  const r = spawnSync('bash', ['-euc', run], { cwd: dir, encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.match(readFileSync(join(dir, 'data.csv'), 'utf8'), /^title,date,location\r\n/);
});

t.test('the Node starter runs locally once the helper is installed', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'init-')), 'local-node');
  init(dir, '--runtime=node');
  // What `npm install` would do for @chronomap/scraper, without reaching the registry.
  mkdirSync(join(dir, 'node_modules', '@chronomap'), { recursive: true });
  symlinkSync(
    fileURLToPath(new URL('..', import.meta.url)),
    join(dir, 'node_modules', '@chronomap', 'scraper'),
  );
  const r = spawnSync(process.execPath, ['scraper.mjs'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, CHRONOMAP_OUTPUT_DIR: dir },
  });
  t.equal(r.status, 0, r.stderr);
  t.match(readFileSync(join(dir, 'data.csv'), 'utf8'), /^title,date,location\r\n/);
});

t.test('refuses an existing directory and leaves it untouched', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'init-existing-'));
  writeFileSync(join(dir, 'scraper.py'), 'mine');
  const r = init(dir);
  t.equal(r.status, 1);
  t.match(r.stderr, /already exists/);
  t.equal(readFileSync(join(dir, 'scraper.py'), 'utf8'), 'mine');
  t.notOk(existsSync(join(dir, 'scrapers.yml')));
});

t.test('usage errors', async (t) => {
  t.match(init().stderr, /usage: chronomap-scraper init <directory>/);
  t.match(init('x', '--runtime', 'ruby').stderr, /--runtime must be python or node/);
  t.match(spawnSync(process.execPath, [bin, 'create', 'x'], { encoding: 'utf8' }).stderr, /usage/);
});

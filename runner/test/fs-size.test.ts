// The tree walk the runner uses on directories a scraper or a repository controls: links are
// entries, never followed; every entry costs at least 4 KiB; the walk stops at its caps.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { MIN_ENTRY_BYTES, treeUsage } from '../src/fs-size.ts';
import { outputProblem } from '../src/output-watch.ts';
import { makeReadable } from '../src/workspace.ts';

const dir = mkdtempSync(join(tmpdir(), 'chronomap-fs-size-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

t.test('a symlink to / is one entry, reported, never followed', async (t) => {
  const root = join(dir, 'link');
  mkdirSync(join(root, 'sub'), { recursive: true });
  symlinkSync('/', join(root, 'sub', 'x'));
  writeFileSync(join(root, 'a.csv'), 'a\n');
  const usage = await treeUsage(root);
  t.same(usage, {
    entries: 3,
    bytes: 3 * MIN_ENTRY_BYTES,
    link: 'sub/x',
    special: undefined,
    incomplete: false,
  });
  t.equal(await outputProblem(root, { maxBytes: 1e9, maxFiles: 1000 }), 'output-link');
});

t.test('a FIFO is a special file', async (t) => {
  const root = join(dir, 'fifo');
  mkdirSync(root);
  execFileSync('mkfifo', [join(root, 'p')]);
  t.equal((await treeUsage(root)).special, 'p');
  t.equal(await outputProblem(root, { maxBytes: 1e9, maxFiles: 1000 }), 'output-link');
});

t.test('empty files count 4 KiB each; the walk stops past the entry cap', async (t) => {
  const root = join(dir, 'many');
  mkdirSync(root);
  for (let i = 0; i < 50; i++) writeFileSync(join(root, `e${i}`), '');
  t.equal((await treeUsage(root)).bytes, 50 * MIN_ENTRY_BYTES);
  const capped = await treeUsage(root, { maxEntries: 10 });
  t.equal(capped.entries, 11);
  t.equal(capped.incomplete, true);
  t.equal(await outputProblem(root, { maxBytes: 1e9, maxFiles: 10 }), 'too-many-files');
  t.equal(await outputProblem(root, { maxBytes: 10 * MIN_ENTRY_BYTES, maxFiles: 1000 }), 'output-too-large');
  t.equal(await outputProblem(root, { maxBytes: 1e9, maxFiles: 50 }), undefined);
});

t.test('an aborted walk stops', async (t) => {
  const root = join(dir, 'many');
  const usage = await treeUsage(root, { signal: AbortSignal.abort() });
  t.equal(usage.entries, 0);
  t.equal(usage.incomplete, true);
});

t.test('making code readable does not chmod through a link', async (t) => {
  const root = join(dir, 'code');
  const outside = join(dir, 'outside');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(outside, { mode: 0o700 });
  writeFileSync(join(outside, 'secret'), 's', { mode: 0o600 });
  writeFileSync(join(root, 'src', 'main.py'), 'pass', { mode: 0o600 });
  symlinkSync(outside, join(root, 'src', 'out'));
  await makeReadable(root);
  const mode = (path: string) => Number(execFileSync('stat', ['-c', '%a', path], { encoding: 'utf8' }));
  t.equal(mode(join(root, 'src', 'main.py')), 644);
  t.equal(mode(outside), 700, 'the linked directory is untouched');
  t.equal(mode(join(outside, 'secret')), 600, 'and so is what it holds');
});

t.test('the walk covers any depth: a socket below PATH_MAX is found', async (t) => {
  const root = join(dir, 'deep');
  mkdirSync(root);
  // 30 levels of 200-character names: 6,000 bytes, past the kernel's 4,096-byte PATH_MAX.
  execFileSync('python3', [
    '-c',
    'import os, socket, sys\nos.chdir(sys.argv[1])\nfor i in range(30):\n    os.mkdir("d" * 200); os.chdir("d" * 200)\nopen("f", "w").write("x")\nsocket.socket(socket.AF_UNIX).bind("s")\n',
    root,
  ]);
  const usage = await treeUsage(root);
  t.equal(usage.entries, 32, 'every level, the file and the socket');
  t.match(usage.special, /^(d{200}\/){30}s$/);
  t.equal(await outputProblem(root, { maxBytes: 1e9, maxFiles: 1000 }), 'output-link');
  execFileSync('rm', ['-rf', root]);
});

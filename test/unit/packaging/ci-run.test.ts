import { readFile } from 'node:fs/promises';
import path from 'node:path';
import t from 'tap';

// .ci/run does not call `npm test` (whose first step, the setup, it has already run and timed): it
// runs npm test's steps itself, one timed step each. This keeps the two lists the same, so CI
// still runs what the README's `npm test` runs.
const root = path.resolve(import.meta.dirname, '../../..');

t.test('.ci/run runs the steps of npm test, the setup once', async (t) => {
  const manifest = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const npmTest = (manifest.scripts.test ?? '').split('&&').map((command) => command.trim());
  const ciRun = await readFile(path.join(root, '.ci', 'run'), 'utf8');
  const ciSteps = [...ciRun.matchAll(/^step \S+ (.+)$/gm)].map((match) => (match[1] ?? '').trim());
  t.equal(npmTest[0], 'scripts/setup --test', 'npm test sets up first (a fresh machine needs it)');
  t.same(ciSteps, npmTest, 'CI runs the same commands in the same order');
  t.equal(ciSteps.filter((command) => command.startsWith('scripts/setup')).length, 1, 'and sets up once');
  t.notMatch(ciRun, /^\s*npm test\b/m, 'without calling npm test, which would set up again');
});

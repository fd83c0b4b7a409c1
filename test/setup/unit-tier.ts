import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';

// The fast tier (`npm run test:fast`) runs the unit files in a few processes instead of one each:
// starting Node, tap's loaders and the modules a file imports cost about 1.8 s of CPU per file,
// which was most of the tier's time. Each entry (unit-tier-<n>.ts, not named *.test.ts, so the
// whole suite's `test/**/*.test.ts` does not run the unit files twice) imports its share of the
// files; their tests register on this process's root test, so a failing assertion fails the entry
// and tap reports it with the file and line it came from. The list is read from the folder, so a
// new unit file joins the tier by its name alone.

const PROJECT_ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * Files that cost as much as a shard on their own, run by an entry of their own so that the shards
 * stay even: check-rules builds the whole program with the TypeScript compiler when it loads.
 */
export const OWN_ENTRY_FILES = ['test/unit/docs/check-rules.test.ts'];

/** Every unit test file, relative to the project root, in a stable order. */
export function unitTestFiles(): string[] {
  return readdirSync(path.join(PROJECT_ROOT, 'test', 'unit'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => path.posix.join('test/unit', name.split(path.sep).join('/')))
    .sort();
}

/** Every `shards`-th unit file from `shard` on, except the files with an entry of their own. */
export async function runUnitShard(shard: number, shards: number): Promise<void> {
  const files = unitTestFiles()
    .filter((file) => !OWN_ENTRY_FILES.includes(file))
    .filter((_, index) => index % shards === shard);
  await runUnitFiles(files, `the unit files ${shard + 1} of every ${shards}`);
}

/** Imports `files` (relative to the project root) so that their tests run in this process. */
export async function runUnitFiles(files: string[], name: string): Promise<void> {
  // The files' tests register on the root test, which ends as soon as its queue is empty: it is
  // empty while the next file is being imported, and a test registered after the end is lost with
  // only a line on stderr. Importing inside a root subtest keeps the root open; the files' tests
  // run in their order after it.
  await t.test(`${name} load`, async (t) => {
    let loaded = 0;
    for (const file of files) {
      try {
        await import(pathToFileURL(path.join(PROJECT_ROOT, file)).href);
        loaded += 1;
      } catch (error) {
        // A file that throws while loading fails the tier with its name.
        t.fail(`${file} loads`, { error });
      }
    }
    t.equal(loaded, files.length, `${files.length} files loaded`);
  });
}

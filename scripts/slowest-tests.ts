import { readFileSync } from 'node:fs';
import path from 'node:path';
import { tapFiles, testOf } from './tap-results.ts';

// The slowest test files of the last tap run, over every test folder (unit, integration and its
// feature folders, browser, ...): tap keeps each file's last output in .tap/test-results/<file>.tap,
// ending with the file's `# time=`. Printed by .ci/run after the suite, and by hand:
//   npx node scripts/slowest-tests.ts [count]   (default 20)
// with each folder's total, so a slow folder shows even when no single file of it is near the top.

const count = Number(process.argv[2] ?? 20);

const timed = tapFiles().flatMap((file) => {
  // The file's own time is its last top-level `# time=` line (subtests' are indented).
  const times = [...readFileSync(file, 'utf8').matchAll(/^# time=([0-9.]+)ms$/gm)];
  const ms = Number(times.at(-1)?.[1]);
  if (!Number.isFinite(ms)) return [];
  return [{ test: testOf(file), ms }];
});

if (timed.length === 0) {
  console.log('No tap results in .tap/test-results: run the tests first.');
} else {
  timed.sort((a, b) => b.ms - a.ms);
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`.padStart(9);
  console.log(`Slowest test files (of ${timed.length}, each file's own time):`);
  for (const { test, ms } of timed.slice(0, count)) console.log(`${seconds(ms)}  ${test}`);
  const folders = new Map<string, { ms: number; files: number }>();
  for (const { test, ms } of timed) {
    const folder = path.dirname(test);
    const total = folders.get(folder) ?? { ms: 0, files: 0 };
    folders.set(folder, { ms: total.ms + ms, files: total.files + 1 });
  }
  console.log("Per folder (the sum of its files' own times; tap runs several files at once):");
  for (const [folder, { ms, files }] of [...folders].sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(`${seconds(ms)}  ${folder} (${files} files)`);
  }
}

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// The failed assertions of the last tap run, one block per failing file: each `not ok` line with the
// lines of its diagnostic that follow (message, found/wanted, stack's first frame). Printed by
// .ci/run last, after the durations, because CI's record keeps only the end of the output and the
// tap reporter's own list of failures scrolls out of it on a long run. By hand:
//   npx node scripts/failed-tests.ts [lines-per-failure]   (default 16)

const results = path.join(import.meta.dirname, '..', '.tap', 'test-results');
const linesPerFailure = Number(process.argv[2] ?? 16);

function tapFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tapFiles(full);
    return entry.name.endsWith('.tap') ? [full] : [];
  });
}

// Only the innermost failures: a failing subtest also makes each enclosing test `not ok`, and those
// lines carry no diagnostic of their own. A `not ok` is a leaf when the next line is its YAML block
// or another assertion, not the end of a subtest whose own failure was printed above it.
function failures(text: string): string[][] {
  const lines = text.split('\n');
  const found: string[][] = [];
  lines.forEach((line, index) => {
    if (!/^\s*not ok /.test(line)) return;
    const next = lines[index + 1] ?? '';
    if (!/^\s*---$/.test(next)) return;
    const block = [line];
    for (let at = index + 1; at < lines.length && block.length < linesPerFailure; at++) {
      block.push(lines[at]!);
      if (/^\s*\.\.\.$/.test(lines[at]!)) break;
    }
    found.push(block);
  });
  return found;
}

const failed = tapFiles(results).flatMap((file) => {
  const found = failures(readFileSync(file, 'utf8'));
  return found.length === 0 ? [] : [{ test: path.relative(results, file).replace(/\.tap$/, ''), found }];
});

if (failed.length === 0) {
  console.log('Failed test files: none.');
} else {
  console.log(`Failed test files (${failed.length}):`);
  for (const { test, found } of failed) {
    console.log(`- ${test}`);
    for (const block of found) for (const line of block) console.log(`    ${line}`);
  }
}

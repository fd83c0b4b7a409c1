import { readFileSync } from 'node:fs';
import { tapFiles, testOf } from './tap-results.ts';

// The failed assertions of the last tap run, one block per failing file: each `not ok` line with the
// lines of its diagnostic that follow (message, found/wanted, stack's first frame). Printed by
// .ci/run last, after the durations, because CI's record keeps only the end of the output and the
// tap reporter's own list of failures scrolls out of it on a long run. By hand:
//   npx node scripts/failed-tests.ts [lines-per-failure]   (default 16)

const linesPerFailure = Number(process.argv[2] ?? 16);

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

// A file can also fail without a failed assertion: it crashed, timed out or exited non-zero, so its
// output lacks the top-level plan (`1..N`) or ends in a top-level `not ok` without a diagnostic.
// Then its last lines say what happened.
const TAIL_LINES = 15;
function failedWithoutAssertion(text: string): string[] | null {
  const complete = /^1\.\.\d+/m.test(text) && !/^not ok /m.test(text);
  return complete ? null : text.trimEnd().split('\n').slice(-TAIL_LINES);
}

const failed = tapFiles().flatMap((file) => {
  const text = readFileSync(file, 'utf8');
  const found = failures(text);
  if (found.length > 0) return [{ test: testOf(file), found }];
  const tail = failedWithoutAssertion(text);
  return tail === null
    ? []
    : [{ test: `${testOf(file)} (no failed assertion: the end of its output)`, found: [tail] }];
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

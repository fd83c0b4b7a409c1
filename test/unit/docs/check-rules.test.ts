import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { checkRules, exportsName, parseRuleRows } from '../../../scripts/check-rules.ts';

// The rule index (docs/rules.md) is checked in the test command: a row that names a function its
// file does not export, a file that does not exist, or a missing test file fails, naming the row.

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const script = path.join(root, 'scripts', 'check-rules.ts');

const table = (implementedBy: string, testedBy: string) => `# Rules

| Rule | Source | Implemented by | Tested by |
|---|---|---|---|
| Page size at most 1000 | spec §Query limits | ${implementedBy} | ${testedBy} |
| Bucket size from the targets | spec §temporal | \`src/domain/read/histogram.ts#chooseBucketSize\` | \`test/unit/domain/read/histogram.test.ts\` |
`;

t.test('the index in docs/rules.md holds', async (t) => {
  const markdown = readFileSync(path.join(root, 'docs', 'rules.md'), 'utf8');
  t.ok(parseRuleRows(markdown).length > 50, 'the tables are found');
  t.same(checkRules(markdown, root), []);
});

t.test('a row whose function is not exported fails, naming the row', async (t) => {
  const problems = checkRules(
    table('`src/domain/read/read-query.ts#parsePageSize`', '`test/unit/domain/read/read-query.test.ts`'),
    root,
  );
  t.same(problems, [
    'docs/rules.md:5 (Page size at most 1000): src/domain/read/read-query.ts exports no parsePageSize',
  ]);
});

t.test('a missing file, a missing test, a reference without a name and an empty cell fail', async (t) => {
  t.match(checkRules(table('`src/domain/nowhere.ts#parsePage`', '`test/unit/nowhere.test.ts`'), root), [
    /:5 \(Page size at most 1000\): src\/domain\/nowhere\.ts does not exist/,
    /:5 \(Page size at most 1000\): test\/unit\/nowhere\.test\.ts does not exist/,
  ]);
  t.match(
    checkRules(table('`src/domain/read/read-query.ts`', '`test/unit/domain/read/read-query.test.ts`'), root),
    [/names no function \(path#name\)/],
  );
  t.match(checkRules(table('', '`test/unit/domain/read/read-query.test.ts`'), root), [
    /names no implementing function/,
  ]);
  t.match(checkRules(table('`src/domain/read/read-query.ts#parsePage`', ''), root), [/names no test/]);
  t.same(checkRules('# no tables here\n', root), ['docs/rules.md: no rule tables found']);
});

t.test('exports are found in declarations and export lists, not in mere mentions', async (t) => {
  const source = [
    'export async function* rows() {}',
    'export const LIMIT = 1;',
    'export class Archive {}',
    'export { helper as publicHelper, other };',
    'function hidden() {}',
    '// export function commented() {}',
  ].join('\n');
  for (const name of ['rows', 'LIMIT', 'Archive', 'publicHelper', 'other'])
    t.ok(exportsName(source, name), name);
  for (const name of ['hidden', 'helper', 'commented', 'row']) t.notOk(exportsName(source, name), name);
});

t.test('the script exits 1 and names the row; 0 on the real index', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-rules-'));
  const bad = path.join(dir, 'rules.md');
  writeFileSync(
    bad,
    table('`src/domain/read/read-query.ts#parsePageSize`', '`test/unit/domain/read/read-query.test.ts`'),
  );
  const run = promisify(execFile);
  const failed = await run(process.execPath, [script, bad]).catch((error: unknown) => error);
  t.match(failed, {
    code: 1,
    stderr: /\(Page size at most 1000\): src\/domain\/read\/read-query\.ts exports no parsePageSize/,
  });
  const passed = await run(process.execPath, [script]);
  t.match(passed.stdout, /every reference holds/);
});

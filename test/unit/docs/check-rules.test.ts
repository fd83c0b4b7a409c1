import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import {
  analyseTree,
  checkExports,
  checkRules,
  checkTree,
  exportsName,
  parseAllowList,
  parseRuleRows,
} from '../../../scripts/check-rules.ts';

// The rule index (docs/rules.md) and the exports of src/ are checked in the test command: a row that
// names a function its file does not declare, a function nothing running reaches, a file that does
// not exist or a missing test file fails, naming the row; so does an export of src/ that nothing the
// entry points run uses.

const root = path.resolve(import.meta.dirname, '..', '..', '..');
const script = path.join(root, 'scripts', 'check-rules.ts');
// Building the program of the real tree takes seconds: once for every test of this file.
const real = analyseTree(root);

const table = (implementedBy: string, testedBy: string) => `# Rules

| Rule | Source | Implemented by | Tested by |
|---|---|---|---|
| Page size at most 1000 | spec §Query limits | ${implementedBy} | ${testedBy} |
| Bucket size from the targets | spec §temporal | \`src/domain/read/histogram.ts#chooseBucketSize\` | \`test/unit/domain/read/histogram.test.ts\` |
`;

t.test('the index in docs/rules.md holds and every export of src/ is used', async (t) => {
  const markdown = readFileSync(path.join(root, 'docs', 'rules.md'), 'utf8');
  t.ok(parseRuleRows(markdown).length > 50, 'the tables are found');
  t.same(checkTree(root, { code: real }), []);
});

t.test('a row whose function is not declared fails, naming the row', async (t) => {
  const problems = checkRules(
    table('`src/domain/read/read-query.ts#parsePageSize`', '`test/unit/domain/read/read-query.test.ts`'),
    root,
    real,
  );
  t.same(problems, [
    'docs/rules.md:5 (Page size at most 1000): src/domain/read/read-query.ts declares no parsePageSize',
  ]);
});

t.test('a missing file, a missing test, a reference without a name and an empty cell fail', async (t) => {
  t.match(checkRules(table('`src/domain/nowhere.ts#parsePage`', '`test/unit/nowhere.test.ts`'), root, real), [
    /:5 \(Page size at most 1000\): src\/domain\/nowhere\.ts does not exist/,
    /:5 \(Page size at most 1000\): test\/unit\/nowhere\.test\.ts does not exist/,
  ]);
  t.match(
    checkRules(
      table('`src/domain/read/read-query.ts`', '`test/unit/domain/read/read-query.test.ts`'),
      root,
      real,
    ),
    [/names no function \(path#name\)/],
  );
  t.match(checkRules(table('', '`test/unit/domain/read/read-query.test.ts`'), root, real), [
    /names no implementing function/,
  ]);
  t.match(checkRules(table('`src/domain/read/read-query.ts#parsePage`', ''), root, real), [/names no test/]);
  t.same(checkRules('# no tables here\n', root, real), ['docs/rules.md: no rule tables found']);
});

t.test('exports outside the analysed code are found in declarations and export lists', async (t) => {
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

// A small project with the real compiler options: an entry, a script, a barrel, a test, and
// exports of every kind the check tells apart.
function fixture(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-reach-'));
  const { compilerOptions } = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8'));
  const files: Record<string, string> = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: { ...compilerOptions, types: [] },
      include: ['src', 'scripts', 'test'],
    }),
    'src/main.ts': [
      "import { run } from './app.ts';",
      "import { fromBarrel } from './barrel.ts';",
      'run();',
      'fromBarrel();',
    ].join('\n'),
    'src/app.ts': [
      "import type { Shape } from './types.ts';",
      "import { liveRule, type TypeOnlyKind } from './rules.ts';",
      'export const ownFileOnly = 1;',
      'export function testedHelper(): number { return ownFileOnly; }',
      'export function planted(): void {}',
      'export function run(shape?: Shape, kind?: TypeOnlyKind): void { testedHelper(); liveRule(); void shape; void kind; }',
    ].join('\n'),
    'src/types.ts': ['export type Shape = { a: number };', 'export type UnusedShape = { b: number };'].join(
      '\n',
    ),
    'src/rules.ts': [
      'export function liveRule(): void {}',
      'export function deadRule(): void {}',
      "export const TYPE_ONLY = ['a', 'b'] as const;",
      'export type TypeOnlyKind = (typeof TYPE_ONLY)[number];',
      'function privateRule(): void {}',
      'export function calledByDeadCode(): void { privateRule(); }',
      'export function deadCaller(): void { calledByDeadCode(); }',
    ].join('\n'),
    'src/deep.ts': 'export function fromBarrel(): void {}\nexport function notReexported(): void {}\n',
    'src/barrel.ts': "export { fromBarrel } from './deep.ts';\n",
    'src/tool-only.ts': 'export function usedByScript(): void {}\n',
    'scripts/tool.ts': "import { usedByScript } from '../src/tool-only.ts';\nusedByScript();\n",
    'test/rules.test.ts': [
      "import { deadRule } from '../src/rules.ts';",
      "import { testedHelper } from '../src/app.ts';",
      'deadRule();',
      'testedHelper();',
    ].join('\n'),
    'test/a.test.ts': '',
    'docs/rules.md': [
      '| Rule | Source | Implemented by | Tested by |',
      '|---|---|---|---|',
      '| Live | spec | `src/app.ts#run`<br>`src/rules.ts#liveRule` | `test/a.test.ts` |',
      '| Dead | spec | `src/rules.ts#deadRule` | `test/rules.test.ts` |',
      '| A type | spec | `src/rules.ts#TypeOnlyKind` | `test/a.test.ts` |',
      '| A value only types use | spec | `src/rules.ts#TYPE_ONLY` | `test/a.test.ts` |',
      '| Private, called by dead code | spec | `src/rules.ts#privateRule` | `test/a.test.ts` |',
      '| Through a script | spec | `src/tool-only.ts#usedByScript` | `test/a.test.ts` |',
      '',
    ].join('\n'),
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

t.test('a planted unused export and a dead rule row fail, naming them', async (t) => {
  const dir = fixture();
  const code = analyseTree(dir);
  t.same(checkRules(readFileSync(path.join(dir, 'docs/rules.md'), 'utf8'), dir, code), [
    'docs/rules.md:4 (Dead): src/rules.ts#deadRule is not reached from the entry points',
    'docs/rules.md:6 (A value only types use): src/rules.ts#TYPE_ONLY is not reached from the entry points',
    'docs/rules.md:7 (Private, called by dead code): src/rules.ts#privateRule is not reached from the entry points',
  ]);
  // Not listed, so passing: used through a barrel (fromBarrel), by a script (usedByScript), only as
  // a type from another file (Shape, TypeOnlyKind), or in its file and by its test (testedHelper).
  t.same(checkExports(code, new Map(), 'allowed.txt'), [
    'src/app.ts:3: ownFileOnly is exported but used only inside its file: un-export it',
    'src/app.ts:5: planted is exported but nothing the entry points run uses it',
    'src/deep.ts:2: notReexported is exported but nothing the entry points run uses it',
    'src/rules.ts:2: deadRule is exported but nothing the entry points run uses it (imported only by test/rules.test.ts)',
    'src/rules.ts:3: TYPE_ONLY is exported but used only inside its file: un-export it',
    'src/rules.ts:6: calledByDeadCode is exported but nothing the entry points run uses it',
    'src/rules.ts:7: deadCaller is exported but nothing the entry points run uses it',
    'src/types.ts:2: UnusedShape is exported but nothing the entry points run uses it',
  ]);
});

t.test(
  'the allow-list lets a listed export stand, and fails on a stale entry or one without a reason',
  async (t) => {
    const code = analyseTree(fixture());
    const allowed = parseAllowList(
      [
        '# why these stay',
        'src/app.ts#planted  kept for the planted test',
        'src/types.ts#UnusedShape',
        'src/app.ts#run  used, so the entry is stale',
      ].join('\n'),
    );
    const problems = checkExports(code, allowed, 'allowed.txt');
    t.notOk(
      problems.some((problem) => problem.includes(': planted is exported')),
      'a listed export stands',
    );
    t.ok(problems.includes('allowed.txt: src/types.ts#UnusedShape needs its reason'));
    t.ok(problems.includes('allowed.txt: src/app.ts#run is used now (or gone): remove the entry'));
  },
);

t.test('the script exits 1 and names the row', async (t) => {
  // On the planted tree: the script's own analysis of the real tree is what `npm run check` runs.
  const dir = fixture();
  const run = promisify(execFile);
  const failed = await run(process.execPath, [script, path.join(dir, 'docs', 'rules.md'), dir]).catch(
    (error: unknown) => error,
  );
  t.match(failed, {
    code: 1,
    stderr: /docs\/rules\.md:4 \(Dead\): src\/rules\.ts#deadRule is not reached from the entry points/,
  });
});

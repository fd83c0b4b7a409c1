// Checks docs/rules.md, the index from each rule of the spec and the design notes to the code that
// implements it and its tests, and that src/ exports nothing the running service does not use.
// - Every `path#name` of a row must exist: in src/ and scripts/ a top-level declaration of the file
//   (found by the TypeScript compiler), in other TypeScript (the runner) an export, in any other file
//   a mention; and every test file must exist.
// - A row's src/ function must be reached from the entry points (reachability.ts): a rule decided by
//   code that nothing running calls is not decided there.
// - Every export of src/ must be used by another file the entry points reach; an export only its own
//   file uses may stay exported for the tests that import it. Known exceptions are listed, each with
//   its reason, in scripts/unused-exports-allowed.txt; an entry that no longer applies fails too.
// Run by `npm run rules` (in `npm run check`); exits 1 naming each problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyseReachability, type Reachability } from './reachability.ts';

export type RuleRow = { line: number; rule: string; implementedBy: string[]; testedBy: string[] };

/** Splits a Markdown table row into its cells; a `|` inside backticks does not split. */
function cells(line: string): string[] {
  const out: string[] = [];
  let current = '';
  let inCode = false;
  for (const char of line.trim().replace(/^\||\|$/g, '')) {
    if (char === '`') inCode = !inCode;
    if (char === '|' && !inCode) {
      out.push(current.trim());
      current = '';
    } else current += char;
  }
  out.push(current.trim());
  return out;
}

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);

/** The rows of every table whose header has "Implemented by" and "Tested by" columns. */
export function parseRuleRows(markdown: string): RuleRow[] {
  const rows: RuleRow[] = [];
  const lines = markdown.split('\n');
  let columns: { rule: number; implemented: number; tested: number } | null = null;
  lines.forEach((text, index) => {
    if (!text.trim().startsWith('|')) {
      columns = null;
      return;
    }
    const row = cells(text);
    if (row.every((cell) => /^:?-+:?$/.test(cell))) return; // the separator under the header
    const implemented = row.indexOf('Implemented by');
    const tested = row.indexOf('Tested by');
    if (implemented >= 0 && tested >= 0) {
      columns = { rule: 0, implemented, tested };
      return;
    }
    if (!columns) return;
    rows.push({
      line: index + 1,
      rule: row[columns.rule] ?? '',
      implementedBy: codeSpans(row[columns.implemented] ?? ''),
      testedBy: codeSpans(row[columns.tested] ?? ''),
    });
  });
  return rows;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether a TypeScript source exports `name` (a declaration or an export list). */
export function exportsName(source: string, name: string): boolean {
  const word = escapeRegExp(name);
  const declaration = new RegExp(
    `^export\\s+(?:declare\\s+)?(?:default\\s+)?(?:async\\s+)?(?:abstract\\s+)?(?:function\\*?|const|let|var|class|interface|type|enum)\\s+${word}\\b`,
    'm',
  );
  if (declaration.test(source)) return true;
  for (const [, list] of source.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const item of (list ?? '').split(',')) {
      const exported = item
        .trim()
        .split(/\s+as\s+/)
        .pop();
      if (exported === name) return true;
    }
  }
  return false;
}

/** The folders whose code the compiler analyses: what the service and its scripts run. */
export const ANALYSED = ['src', 'scripts'];

/** The entry points: the CLI (bin/chronomap runs src/main.ts) and every script under scripts/. */
export function entryPoints(root: string): string[] {
  const scripts = readdirSync(path.join(root, 'scripts')).filter((name) => name.endsWith('.ts'));
  return ['src/main.ts', ...scripts.map((name) => `scripts/${name}`)];
}

function referenceProblem(
  root: string,
  code: Reachability,
  reference: string,
  requireName: boolean,
): string | null {
  const [file = '', name] = reference.split('#');
  if (requireName && !name) return `\`${reference}\` names no function (path#name)`;
  const full = path.join(root, file);
  if (!existsSync(full)) return `${file} does not exist`;
  if (!name) return null;
  const source = readFileSync(full, 'utf8');
  if (!/\.(ts|mts|cts)$/.test(file)) return source.includes(name) ? null : `${file} does not mention ${name}`;
  if (!ANALYSED.some((folder) => file.startsWith(`${folder}/`))) {
    return exportsName(source, name) ? null : `${file} exports no ${name}`;
  }
  const found = code.lookup(file, name);
  if (!found) return `${file} declares no ${name}`;
  if (requireName && !found.reached) return `${file}#${name} is not reached from the entry points`;
  return null;
}

/** The problems of the index, each naming its row; none when every reference holds. */
export function checkRules(
  markdown: string,
  root: string,
  code: Reachability,
  file = 'docs/rules.md',
): string[] {
  const problems: string[] = [];
  const rows = parseRuleRows(markdown);
  if (rows.length === 0) problems.push(`${file}: no rule tables found`);
  for (const row of rows) {
    const where = `${file}:${row.line} (${row.rule})`;
    if (row.implementedBy.length === 0) problems.push(`${where}: names no implementing function`);
    if (row.testedBy.length === 0) problems.push(`${where}: names no test`);
    for (const reference of row.implementedBy) {
      const problem = referenceProblem(root, code, reference, true);
      if (problem) problems.push(`${where}: ${problem}`);
    }
    for (const reference of row.testedBy) {
      const problem = referenceProblem(root, code, reference, false);
      if (problem) problems.push(`${where}: ${problem}`);
    }
  }
  return problems;
}

/** The exports of src/ known to be unused, each with its reason. */
const ALLOW_LIST = 'scripts/unused-exports-allowed.txt';

/** `path#name  reason` lines of the allow-list; `#` starts a comment line. */
export function parseAllowList(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [reference = '', ...reason] = trimmed.split(/\s+/);
    entries.set(reference, reason.join(' '));
  }
  return entries;
}

/**
 * The exports of src/ that nothing running uses, except those the allow-list names (with a reason);
 * and the allow-list's entries without a reason or that no longer name such an export.
 */
export function checkExports(code: Reachability, allowed: Map<string, string>, file: string): string[] {
  const problems: string[] = [];
  const listed = new Set<string>();
  for (const unused of code.unusedExports) {
    const reference = `${unused.file}#${unused.name}`;
    if (unused.kind === 'own-file' && unused.importedBy.length > 0) continue;
    if (allowed.has(reference)) {
      listed.add(reference);
      continue;
    }
    const tests = unused.importedBy.length > 0 ? ` (imported only by ${unused.importedBy.join(', ')})` : '';
    problems.push(
      unused.kind === 'own-file'
        ? `${unused.file}:${unused.line}: ${unused.name} is exported but used only inside its file: un-export it`
        : `${unused.file}:${unused.line}: ${unused.name} is exported but nothing the entry points run uses it${tests}`,
    );
  }
  for (const [reference, reason] of allowed) {
    if (!listed.has(reference))
      problems.push(`${file}: ${reference} is used now (or gone): remove the entry`);
    else if (!reason) problems.push(`${file}: ${reference} needs its reason`);
  }
  return problems;
}

/** What the entry points of the tree under `root` reach (a few seconds: it builds the program). */
export const analyseTree = (root: string): Reachability =>
  analyseReachability(root, { entries: entryPoints(root), live: ANALYSED, checked: ['src'] });

/** Every problem of the index and of the exports, for the tree under `root`. */
export function checkTree(
  root: string,
  { rulesFile = 'docs/rules.md', allowListFile = ALLOW_LIST, code = analyseTree(root) } = {},
): string[] {
  const allowPath = path.join(root, allowListFile);
  const allowed = existsSync(allowPath)
    ? parseAllowList(readFileSync(allowPath, 'utf8'))
    : new Map<string, string>();
  return [
    ...checkRules(readFileSync(path.join(root, rulesFile), 'utf8'), root, code, rulesFile),
    ...checkExports(code, allowed, allowListFile),
  ];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `check-rules.ts [rules file] [tree]`: this checkout and its docs/rules.md unless told (the unit
  // test runs it on a small planted tree: the real one takes seconds to analyse).
  const root = process.argv[3]
    ? path.resolve(process.argv[3])
    : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const file = process.argv[2] ? path.relative(root, path.resolve(process.argv[2])) : 'docs/rules.md';
  const problems = checkTree(root, { rulesFile: file });
  if (problems.length > 0) {
    process.stderr.write(
      `${problems.join('\n')}\n${problems.length} problem(s) in the rule index and the exports\n`,
    );
    process.exit(1);
  }
  process.stdout.write(
    `rule index: ${parseRuleRows(readFileSync(path.join(root, file), 'utf8')).length} rules, every reference holds and is reached; every export of src/ is used\n`,
  );
}

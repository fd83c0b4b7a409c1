// Checks docs/rules.md, the index from each rule of the spec and the design notes to the code that
// implements it and its tests: every `path#name` must be a file that exports `name` (for a file that
// is not TypeScript, one whose text contains it), and every test file must exist. Run by
// `npm run check`; exits 1 naming each broken row, so a rename that forgets the index fails the test
// command instead of leaving the index wrong.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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

function referenceProblem(root: string, reference: string, requireName: boolean): string | null {
  const [file = '', name] = reference.split('#');
  if (requireName && !name) return `\`${reference}\` names no function (path#name)`;
  const full = path.join(root, file);
  if (!existsSync(full)) return `${file} does not exist`;
  if (!name) return null;
  const source = readFileSync(full, 'utf8');
  if (/\.(ts|mts|cts)$/.test(file)) {
    return exportsName(source, name) ? null : `${file} exports no ${name}`;
  }
  return source.includes(name) ? null : `${file} does not mention ${name}`;
}

/** The problems of the index, each naming its row; none when every reference holds. */
export function checkRules(markdown: string, root: string, file = 'docs/rules.md'): string[] {
  const problems: string[] = [];
  const rows = parseRuleRows(markdown);
  if (rows.length === 0) problems.push(`${file}: no rule tables found`);
  for (const row of rows) {
    const where = `${file}:${row.line} (${row.rule})`;
    if (row.implementedBy.length === 0) problems.push(`${where}: names no implementing function`);
    if (row.testedBy.length === 0) problems.push(`${where}: names no test`);
    for (const reference of row.implementedBy) {
      const problem = referenceProblem(root, reference, true);
      if (problem) problems.push(`${where}: ${problem}`);
    }
    for (const reference of row.testedBy) {
      const problem = referenceProblem(root, reference, false);
      if (problem) problems.push(`${where}: ${problem}`);
    }
  }
  return problems;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const file = process.argv[2] ?? path.join(root, 'docs', 'rules.md');
  const problems = checkRules(readFileSync(file, 'utf8'), root, path.relative(root, file));
  if (problems.length > 0) {
    process.stderr.write(
      `${problems.join('\n')}\n${problems.length} broken reference(s) in the rule index\n`,
    );
    process.exit(1);
  }
  process.stdout.write(
    `rule index: ${parseRuleRows(readFileSync(file, 'utf8')).length} rules, every reference holds\n`,
  );
}

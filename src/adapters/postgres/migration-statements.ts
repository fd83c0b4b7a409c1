// The statements of a migration file that runs outside a transaction (migrator.ts): PostgreSQL
// refuses CREATE INDEX CONCURRENTLY in a string of several statements, so they are sent one by one.

/**
 * The statements of a file, split at the semicolons that end them: not those inside quotes,
 * quoted identifiers, dollar-quoted bodies or comments. Comment-only pieces are dropped.
 */
export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let start = 0;
  let i = 0;
  let meaningful = false; // the current piece holds something besides blanks and comments
  const push = (end: number) => {
    if (meaningful) statements.push(text.slice(start, end).trim());
    start = end + 1;
    meaningful = false;
  };
  while (i < text.length) {
    const char = text[i] as string;
    const rest = text.slice(i);
    if (rest.startsWith('--')) {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end + 1;
    } else if (rest.startsWith('/*')) {
      i = closingCommentEnd(text, i);
    } else if (char === "'" || char === '"') {
      i = closingQuoteEnd(text, i, char);
      meaningful = true;
    } else if (char === '$' && /^\$[A-Za-z_]*\$/.test(rest)) {
      const tag = (rest.match(/^\$[A-Za-z_]*\$/) as RegExpMatchArray)[0];
      const end = text.indexOf(tag, i + tag.length);
      i = end === -1 ? text.length : end + tag.length;
      meaningful = true;
    } else if (char === ';') {
      push(i);
      i += 1;
    } else {
      if (!/\s/.test(char)) meaningful = true;
      i += 1;
    }
  }
  push(text.length);
  return statements;
}

function closingQuoteEnd(text: string, from: number, quote: string): number {
  let i = from + 1;
  while (i < text.length) {
    if (text[i] === quote) {
      if (text[i + 1] === quote)
        i += 2; // a doubled quote stands for itself
      else return i + 1;
    } else i += 1;
  }
  return text.length;
}

/** Block comments nest in PostgreSQL. */
function closingCommentEnd(text: string, from: number): number {
  let depth = 0;
  let i = from;
  while (i < text.length) {
    if (text.startsWith('/*', i)) {
      depth += 1;
      i += 2;
    } else if (text.startsWith('*/', i)) {
      depth -= 1;
      i += 2;
      if (depth === 0) return i;
    } else i += 1;
  }
  return text.length;
}

/** The indexes a statement builds with CREATE [UNIQUE] INDEX CONCURRENTLY, as written (maybe schema-qualified). */
export function concurrentIndexNames(statement: string): string[] {
  const pattern =
    /\bcreate\s+(?:unique\s+)?index\s+concurrently\s+(?:if\s+not\s+exists\s+)?((?:"[^"]+"|[a-z_][\w$]*)(?:\.(?:"[^"]+"|[a-z_][\w$]*))?)/gi;
  return [...statement.matchAll(pattern)].map((match) => match[1] as string);
}

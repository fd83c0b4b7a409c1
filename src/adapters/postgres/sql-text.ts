import type { StandardSchemaV1 } from '@standard-schema/spec';
import { createSqlTokenSqlFragment, isSqlToken, type QuerySqlToken, type SqlToken } from 'slonik';

// SQL text built once per statement instead of once per nesting level. Slonik's `sql.fragment`
// renders each fragment when it is made: interpolating a fragment into another re-numbers all of its
// placeholders (a regular-expression pass over its text), so a statement nested five or six deep,
// as the read API's are, is rewritten five or six times, and that was about half of the API
// process's CPU for building an /events page statement. A `Sql` here only records its pieces;
// `query` walks the tree once, writing the text with its placeholders numbered in order and
// collecting the values beside it. Slonik tokens (`sql.array`, `sql.fragment` from other modules)
// may be interpolated: each is rendered by Slonik at its position. The result is the query token
// Slonik would build from the same text and values (test/unit/sql-text.test.ts).

const SQL = Symbol('chronomap.sql');

/** A piece of SQL text with its values; rendered only by `query`. */
export type Sql = {
  readonly [SQL]: true;
  readonly strings: readonly string[];
  readonly values: readonly SqlValue[];
};

/** What a `Sql` may hold: a value (a parameter), another `Sql`, or a Slonik token. */
type SqlValue = Sql | SqlToken | string | number | boolean | null;

/** `sql.fragment`, lazily: `sqlText\`a = ${1} and ${other}\``. */
export function sqlText(strings: TemplateStringsArray, ...values: SqlValue[]): Sql {
  return { [SQL]: true, strings, values };
}

/** `sql.join`: the members with `glue` between them. */
export function joinSql(members: readonly Sql[], glue: string): Sql {
  const strings = [''];
  for (let i = 1; i < members.length; i += 1) strings.push(glue);
  strings.push('');
  return { [SQL]: true, strings: members.length === 0 ? [''] : strings, values: members };
}

function isSql(value: unknown): value is Sql {
  return typeof value === 'object' && value !== null && SQL in value;
}

type Rendered = { text: string; values: unknown[] };

function render(piece: Sql, out: Rendered): void {
  const { strings, values } = piece;
  out.text += strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) {
    const value = values[i] as SqlValue;
    if (isSql(value)) render(value, out);
    else if (value !== null && typeof value === 'object') {
      if (!isSqlToken(value)) throw new TypeError('Unexpected value in SQL text.');
      const fragment = createSqlTokenSqlFragment(value, out.values.length);
      out.text += fragment.sql;
      for (const bound of fragment.values) out.values.push(bound);
    } else {
      if (value === undefined) throw new TypeError(`SQL text cannot be bound to undefined (value ${i}).`);
      out.values.push(value);
      out.text += `$slonik_${out.values.length}`;
    }
    out.text += strings[i + 1] ?? '';
  }
}

/** The statement as Slonik's `sql.type(parser)` would give it. */
export function query<T extends StandardSchemaV1>(parser: T, statement: Sql): QuerySqlToken<T> {
  const out: Rendered = { text: '', values: [] };
  render(statement, out);
  return Object.freeze({
    parser,
    sql: out.text,
    type: Symbol.for('SLONIK_TOKEN_QUERY'),
    values: out.values,
  }) as unknown as QuerySqlToken<T>;
}

/** `sql.type(parser)`, lazily: `typed(Row)\`select ...\``, rendered in one pass. */
export function typed<T extends StandardSchemaV1>(
  parser: T,
): (strings: TemplateStringsArray, ...values: SqlValue[]) => QuerySqlToken<T> {
  return (strings, ...values) => query(parser, sqlText(strings, ...values));
}

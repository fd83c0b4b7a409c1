import type { FragmentSqlToken as SqlFragment } from 'slonik';
import type { Condition, FieldType, SortKey, WhereNode } from '../../domain/read/where.ts';
import { sql } from './database.ts';

// Turns a parsed where tree into SQL. Column expressions come only from the collection's column
// map (fixed text in our code); every value is a bound parameter with an explicit cast.

export type ColumnMap = Record<string, { sql: SqlFragment; type: FieldType }>;

const CAST = { number: 'numeric', string: 'text', boolean: 'boolean', date: 'timestamptz' } as const;

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function value(type: FieldType, v: unknown): SqlFragment {
  switch (type) {
    case 'number':
      return sql.fragment`${Number(v)}::numeric`;
    case 'boolean':
      return sql.fragment`${Boolean(v)}::boolean`;
    case 'date':
      return sql.fragment`${String(v)}::timestamptz`;
    case 'string':
      return sql.fragment`${String(v)}::text`;
  }
}

function condition(c: Condition, columns: ColumnMap): SqlFragment {
  const column = columns[c.field];
  if (!column) throw new Error(`no column for field ${c.field}`);
  const col = column.sql;
  switch (c.operator) {
    case 'equals':
      return sql.fragment`${col} = ${value(column.type, c.value)}`;
    case 'not_equals':
      // Payload counts rows where the field is empty as "not equal".
      return sql.fragment`${col} is distinct from ${value(column.type, c.value)}`;
    case 'greater_than':
      return sql.fragment`${col} > ${value(column.type, c.value)}`;
    case 'greater_than_equal':
      return sql.fragment`${col} >= ${value(column.type, c.value)}`;
    case 'less_than':
      return sql.fragment`${col} < ${value(column.type, c.value)}`;
    case 'less_than_equal':
      return sql.fragment`${col} <= ${value(column.type, c.value)}`;
    case 'in':
    case 'not_in': {
      const list = sql.array(
        c.value.map((v) => (column.type === 'number' ? Number(v) : v) as never),
        CAST[column.type],
      );
      return c.operator === 'in'
        ? sql.fragment`${col} = any(${list})`
        : sql.fragment`(${col} is null or not (${col} = any(${list})))`;
    }
    case 'contains':
      return sql.fragment`${col} ilike ${`%${escapeLike(String(c.value))}%`}`;
    case 'like': {
      // Payload's like: every word of the value appears, in any order, ignoring case.
      const words = String(c.value).split(/\s+/).filter(Boolean);
      if (words.length === 0) return sql.fragment`true`;
      return sql.fragment`(${sql.join(
        words.map((w) => sql.fragment`${col} ilike ${`%${escapeLike(w)}%`}`),
        sql.fragment` and `,
      )})`;
    }
    case 'exists':
      return c.value ? sql.fragment`${col} is not null` : sql.fragment`${col} is null`;
  }
}

export function whereSql(node: WhereNode | null, columns: ColumnMap): SqlFragment {
  if (node === null) return sql.fragment`true`;
  if ('and' in node) {
    return sql.fragment`(${sql.join(
      node.and.map((child) => whereSql(child, columns)),
      sql.fragment` and `,
    )})`;
  }
  if ('or' in node) {
    return sql.fragment`(${sql.join(
      node.or.map((child) => whereSql(child, columns)),
      sql.fragment` or `,
    )})`;
  }
  return condition(node, columns);
}

/** ORDER BY from sort keys, always ending with the id so pages never overlap. */
export function orderSql(sort: SortKey[], columns: ColumnMap, idColumn: SqlFragment): SqlFragment {
  const keys = sort.map((key) => {
    const column = columns[key.field];
    if (!column) throw new Error(`no column for field ${key.field}`);
    return key.descending
      ? sql.fragment`${column.sql} desc nulls last`
      : sql.fragment`${column.sql} asc nulls last`;
  });
  const tieBreak = sort.some((key) => key.field === 'id') ? [] : [sql.fragment`${idColumn} desc`];
  return sql.fragment`${sql.join([...keys, ...tieBreak], sql.fragment`, `)}`;
}

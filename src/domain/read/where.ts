import { isSupportedInstant, supportedRangeText } from './date-range.ts';
import { ValidationError } from '../errors.ts';
import { FORBIDDEN_KEYS } from '../forbidden-keys.ts';

// Payload CMS's `where` query language, parsed into a tree that names only whitelisted fields with
// values already checked against each field's type. The SQL side (adapters/postgres/where-sql.ts)
// turns field names into columns from the same whitelist and passes every value as a parameter, so
// nothing a caller writes ever becomes SQL text. Anything malformed is a ValidationError (400).

export type FieldType = 'number' | 'string' | 'boolean' | 'date';
type FieldSpec = { type: FieldType; filter?: boolean; sort?: boolean };
export type FieldWhitelist = Record<string, FieldSpec>;

export const OPERATORS = [
  'equals',
  'not_equals',
  'in',
  'not_in',
  'greater_than',
  'greater_than_equal',
  'less_than',
  'less_than_equal',
  'like',
  'contains',
  'exists',
] as const;
type Operator = (typeof OPERATORS)[number];

type Scalar = string | number | boolean;
export type Condition =
  | { field: string; operator: 'in' | 'not_in'; value: Scalar[] }
  | { field: string; operator: 'exists'; value: boolean }
  | { field: string; operator: Exclude<Operator, 'in' | 'not_in' | 'exists'>; value: Scalar };
export type WhereNode = { and: WhereNode[] } | { or: WhereNode[] } | Condition;

/**
 * Complexity budget of one where tree. `contains` and `like` cannot use an index (they scan every
 * visible row once per pattern), so they get a budget of their own: `textMatches` counts each
 * `contains` and each word of a `like`, and their values are shorter than other values.
 */
const WHERE_LIMITS = {
  depth: 6,
  conditions: 50,
  listValues: 500,
  valueLength: 1000,
  textMatches: 5,
  textMatchLength: 100,
};

/** Built from user input: always null-prototype objects, so no key can reach Object.prototype. */
type Tree = { [key: string]: Tree | string | string[] };

function invalid(message: string, field?: string): never {
  throw new ValidationError(message, { code: 'INVALID_WHERE', ...(field ? { field } : {}) });
}

/** `where[or][0][title][equals]` -> ['or', '0', 'title', 'equals'] (after the leading `where`). */
function bracketPath(key: string): string[] | null {
  const match = /^where((?:\[[^[\]]*\])+)$/.exec(key);
  if (!match?.[1]) return null;
  return [...match[1].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? '');
}

/** Builds the nested tree from the flat query-string keys that start with `where[`. */
export function whereTreeFromQuery(query: Record<string, unknown>): Tree | null {
  let tree: Tree | null = null;
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('where')) continue;
    const path = bracketPath(key);
    if (!path || path.some((segment) => segment === '')) invalid(`malformed where parameter "${key}"`);
    if (path.length > WHERE_LIMITS.depth * 2 + 2) invalid(`where parameter "${key}" is nested too deeply`);
    const forbidden = path.find((segment) => FORBIDDEN_KEYS.has(segment));
    if (forbidden !== undefined) invalid(`where parameter "${key}" uses the forbidden key "${forbidden}"`);
    const value = Array.isArray(raw) ? raw.map(String) : String(raw);
    tree ??= Object.create(null) as Tree;
    let node: Tree = tree;
    for (const segment of path.slice(0, -1)) {
      const next: Tree | string | string[] = node[segment] ?? (Object.create(null) as Tree);
      if (typeof next === 'string' || Array.isArray(next))
        invalid(`where parameter "${key}" conflicts with another`);
      node[segment] = next;
      node = next;
    }
    const last = path[path.length - 1] as string;
    if (Object.hasOwn(node, last)) invalid(`where parameter "${key}" is given twice`);
    node[last] = value;
  }
  return tree;
}

export function parseWhere(tree: Tree | null, fields: FieldWhitelist): WhereNode | null {
  if (tree === null) return null;
  const counter = { conditions: 0, textMatches: 0 };
  return parseNode(tree, fields, 0, counter);
}

type Counter = { conditions: number; textMatches: number };

function parseNode(tree: Tree, fields: FieldWhitelist, depth: number, counter: Counter): WhereNode {
  if (depth > WHERE_LIMITS.depth) invalid('where is nested too deeply');
  const parts: WhereNode[] = [];
  for (const [key, value] of Object.entries(tree)) {
    if (key === 'and' || key === 'or') {
      if (typeof value === 'string' || Array.isArray(value))
        invalid(`where[${key}] must hold numbered conditions`);
      const indexes = Object.keys(value);
      if (indexes.length === 0 || indexes.some((index) => !/^\d{1,3}$/.test(index))) {
        invalid(`where[${key}] must hold numbered conditions such as where[${key}][0][field][equals]=...`);
      }
      const children = indexes
        .sort((a, b) => Number(a) - Number(b))
        .map((index) => {
          const child = value[index];
          if (typeof child === 'string' || Array.isArray(child) || child === undefined) {
            return invalid(`where[${key}][${index}] must hold a condition`);
          }
          return parseNode(child, fields, depth + 1, counter);
        });
      parts.push(key === 'and' ? { and: children } : { or: children });
      continue;
    }
    const spec = Object.hasOwn(fields, key) ? fields[key] : undefined;
    if (!spec || spec.filter === false) {
      invalid(`unknown field "${key}" in where (filterable: ${filterable(fields).join(', ')})`, key);
    }
    if (typeof value === 'string' || Array.isArray(value))
      invalid(`where[${key}] needs an operator, e.g. where[${key}][equals]`, key);
    for (const [operator, raw] of Object.entries(value)) {
      counter.conditions += 1;
      if (counter.conditions > WHERE_LIMITS.conditions)
        invalid(`where has more than ${WHERE_LIMITS.conditions} conditions`);
      if (typeof raw !== 'string' && !Array.isArray(raw)) {
        // `where[field][in][0]=a&where[field][in][1]=b` is Payload's array form.
        if (operator === 'in' || operator === 'not_in') {
          const items = Object.entries(raw);
          if (items.some(([index, item]) => !/^\d{1,3}$/.test(index) || typeof item !== 'string')) {
            invalid(`where[${key}][${operator}] must be a list of values`, key);
          }
          parts.push(
            condition(
              key,
              spec,
              operator,
              items.map(([, item]) => item as string),
            ),
          );
          continue;
        }
        invalid(`where[${key}][${operator}] must be a value`, key);
      }
      const parsed = condition(key, spec, operator, raw);
      countTextMatches(parsed, counter);
      parts.push(parsed);
    }
  }
  if (parts.length === 0) invalid('where holds no condition');
  return parts.length === 1 ? (parts[0] as WhereNode) : { and: parts };
}

function countTextMatches(parsed: Condition, counter: Counter): void {
  if (parsed.operator !== 'contains' && parsed.operator !== 'like') return;
  const text = String(parsed.value);
  if (text.length > WHERE_LIMITS.textMatchLength)
    invalid(
      `the ${parsed.operator} value for ${parsed.field} is longer than ${WHERE_LIMITS.textMatchLength} characters`,
      parsed.field,
    );
  counter.textMatches += parsed.operator === 'like' ? text.split(/\s+/).filter(Boolean).length : 1;
  if (counter.textMatches > WHERE_LIMITS.textMatches)
    invalid(
      `where has more than ${WHERE_LIMITS.textMatches} contains/like patterns (each word of a like counts); they scan every row`,
    );
}

function filterable(fields: FieldWhitelist): string[] {
  return Object.entries(fields)
    .filter(([, spec]) => spec.filter !== false)
    .map(([name]) => name);
}

function condition(field: string, spec: FieldSpec, operator: string, raw: string | string[]): Condition {
  if (!(OPERATORS as readonly string[]).includes(operator)) {
    invalid(`unknown operator "${operator}" for ${field} (use ${OPERATORS.join(', ')})`, field);
  }
  const op = operator as Operator;
  if (op === 'exists')
    return { field, operator: op, value: coerce(field, 'boolean', single(field, op, raw)) as boolean };
  if (op === 'in' || op === 'not_in') {
    const items = Array.isArray(raw) ? raw : raw.split(',');
    if (items.length > WHERE_LIMITS.listValues)
      invalid(`where[${field}][${op}] has more than ${WHERE_LIMITS.listValues} values`, field);
    return { field, operator: op, value: items.map((item) => coerce(field, spec.type, item)) };
  }
  if ((op === 'like' || op === 'contains') && spec.type !== 'string') {
    invalid(`operator "${op}" applies to text fields only, not to ${field}`, field);
  }
  if (op.startsWith('greater') || op.startsWith('less')) {
    if (spec.type === 'boolean')
      invalid(`operator "${op}" does not apply to the true/false field ${field}`, field);
  }
  return { field, operator: op, value: coerce(field, spec.type, single(field, op, raw)) };
}

function single(field: string, operator: string, raw: string | string[]): string {
  if (Array.isArray(raw)) invalid(`where[${field}][${operator}] is given more than once`, field);
  return raw;
}

function coerce(field: string, type: FieldType, raw: string): Scalar {
  if (raw.length > WHERE_LIMITS.valueLength) invalid(`the value for ${field} is too long`, field);
  switch (type) {
    case 'number': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value))
        invalid(`${field} takes a number, not "${raw}"`, field);
      if (Number.isInteger(value) && !Number.isSafeInteger(value))
        invalid(`${field}: "${raw}" is out of range`, field);
      return value;
    }
    case 'boolean':
      if (raw !== 'true' && raw !== 'false') invalid(`${field} takes true or false, not "${raw}"`, field);
      return raw === 'true';
    case 'date': {
      const time = Date.parse(raw);
      if (!/^\d{4}-\d\d-\d\d/.test(raw) || Number.isNaN(time))
        invalid(`${field} takes an ISO 8601 date, not "${raw}"`, field);
      if (!isSupportedInstant(time))
        invalid(`${field}: "${raw}" is outside the supported ${supportedRangeText()}`, field);
      return new Date(time).toISOString();
    }
    case 'string':
      // Postgres text cannot hold NUL; refuse it here rather than fail in the driver.
      if (raw.includes('\u0000')) invalid(`the value for ${field} holds a NUL character`, field);
      return raw;
  }
}

export type SortKey = { field: string; descending: boolean };

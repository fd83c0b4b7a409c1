import {
  bboxGeometry,
  Budget,
  type Comparison,
  type CqlNode,
  type CqlOperand,
  CQL_LIMITS,
  dateLiteral,
  type Geometry,
  invalidFilter,
  position,
  ring,
  timestampLiteral,
} from './cql2-tree.ts';

// CQL2 JSON (OGC 21-065, the cql2-json encoding): `{"op": "...", "args": [...]}` objects, operands
// `{"property": "name"}`, literals, `{"timestamp": ...}`, `{"date": ...}`, `{"interval": [a, b]}`,
// GeoJSON geometries and `{"bbox": [...]}`, read into the raw tree of cql2-tree.ts. The JSON is
// parsed by JSON.parse after its length is checked; its depth and size are bounded while it is read.

const COMPARISONS = new Set<string>(['=', '<>', '<', '<=', '>', '>=']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Parses CQL2 JSON text into the raw tree; a ValidationError (400) for anything malformed or too large. */
export function parseCql2Json(text: string): CqlNode {
  if (text.length > CQL_LIMITS.length)
    invalidFilter(`the filter is longer than ${CQL_LIMITS.length} characters`);
  // Nesting beyond the limit is refused before JSON.parse recurses into it.
  let depth = 0;
  for (const char of text) {
    if (char === '[' || char === '{') depth += 1;
    if (char === ']' || char === '}') depth -= 1;
    if (depth > CQL_LIMITS.depth * 3)
      invalidFilter(`the filter is nested more than ${CQL_LIMITS.depth} deep`);
  }
  let parsed: Json;
  try {
    parsed = JSON.parse(text) as Json;
  } catch {
    return invalidFilter(
      'filter-lang=cql2-json needs a JSON filter such as {"op":"=","args":[{"property":"mag"},3]}',
    );
  }
  const budget = new Budget();
  return expression(parsed, budget, 0);
}

function isObject(value: Json): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function expression(value: Json, budget: Budget, depth: number): CqlNode {
  budget.depth(depth);
  budget.node();
  if (typeof value === 'boolean') return { op: 'literal', value };
  if (!isObject(value) || typeof value.op !== 'string' || !Array.isArray(value.args)) {
    return invalidFilter('a filter expression is an object {"op": ..., "args": [...]}');
  }
  const op = value.op;
  const args = value.args;
  const count = (n: number) => {
    if (args.length !== n) invalidFilter(`"${op.slice(0, 20)}" takes ${n} arguments`);
  };
  const item = (i: number) => operand(args[i] as Json, budget, depth + 1);
  switch (op) {
    case 'and':
    case 'or':
      if (args.length < 2) invalidFilter(`"${op}" takes at least two arguments`);
      return { op, args: args.map((arg) => expression(arg, budget, depth + 1)) };
    case 'not':
      count(1);
      return { op: 'not', arg: expression(args[0] as Json, budget, depth + 1) };
    case 'between':
      count(3);
      return { op: 'between', args: [item(0), item(1), item(2)] };
    case 'in': {
      count(2);
      const list = args[1];
      if (!Array.isArray(list) || list.length === 0)
        invalidFilter('"in" takes a property and an array of values');
      if (list.length > CQL_LIMITS.listValues)
        invalidFilter(`an in list holds at most ${CQL_LIMITS.listValues} values`);
      return { op: 'in', value: item(0), list: list.map((entry) => operand(entry, budget, depth + 2)) };
    }
    case 'like':
      count(2);
      return { op: 'like', args: [item(0), item(1)] };
    case 'isNull':
      count(1);
      return { op: 'isNull', arg: item(0) };
    case 's_intersects':
    case 't_intersects':
      count(2);
      return { op, args: [item(0), item(1)] };
    default:
      if (COMPARISONS.has(op)) {
        count(2);
        return { op: op as Comparison, args: [item(0), item(1)] };
      }
      return invalidFilter(`unsupported operator "${op.slice(0, 40)}"`);
  }
}

function operand(value: Json, budget: Budget, depth: number): CqlOperand {
  budget.node();
  budget.depth(depth);
  if (typeof value === 'string') {
    if (value.length > CQL_LIMITS.stringLength)
      invalidFilter(`a string is longer than ${CQL_LIMITS.stringLength} characters`);
    return { value };
  }
  if (typeof value === 'number' && !Number.isFinite(value)) invalidFilter('a number is out of range');
  if (typeof value === 'number' || typeof value === 'boolean') return { value };
  if (!isObject(value))
    return invalidFilter('an operand is a value, {"property": ...} or a temporal or spatial literal');
  const keys = Object.keys(value);
  if (typeof value.property === 'string' && keys.length === 1) return { property: value.property };
  if (typeof value.timestamp === 'string' && keys.length === 1)
    return { timestamp: timestampLiteral(value.timestamp) };
  if (typeof value.date === 'string' && keys.length === 1) return { date: dateLiteral(value.date) };
  if (Array.isArray(value.interval) && keys.length === 1) {
    if (value.interval.length !== 2) invalidFilter('an interval has two ends');
    const end = (item: Json): CqlOperand => {
      if (item === '..') return { open: true };
      if (typeof item === 'string')
        return /^\d{4}-\d{2}-\d{2}$/.test(item)
          ? { date: dateLiteral(item) }
          : { timestamp: timestampLiteral(item) };
      const inner = isObject(item) ? operand(item, budget, depth + 1) : null;
      if (inner && ('timestamp' in inner || 'date' in inner)) return inner;
      return invalidFilter('an interval\'s ends are instants, dates or ".."');
    };
    return { interval: [end(value.interval[0] as Json), end(value.interval[1] as Json)] };
  }
  if (Array.isArray(value.bbox) && keys.length === 1) return { geometry: bboxGeometry(value.bbox) };
  if (typeof value.type === 'string') return { geometry: geometry(value, budget) };
  return invalidFilter('an operand is a value, {"property": ...} or a temporal or spatial literal');
}

function geometry(value: { [key: string]: Json }, budget: Budget): Geometry {
  const coordinates = value.coordinates;
  const positionOf = (item: Json): [number, number] => {
    if (!Array.isArray(item)) return invalidFilter('a position is an array [longitude, latitude]');
    budget.vertex();
    return position(item);
  };
  const array = (item: Json | undefined): Json[] =>
    Array.isArray(item) ? item : invalidFilter('GeoJSON coordinates must be arrays');
  const polygon = (item: Json): Array<Array<[number, number]>> => {
    const rings = array(item);
    if (rings.length === 0) invalidFilter('a polygon needs a ring');
    return rings.map((r) => ring(array(r).map(positionOf)));
  };
  switch (value.type) {
    case 'Point':
      return { type: 'Point', coordinates: positionOf(coordinates ?? null) };
    case 'Polygon':
      return { type: 'Polygon', coordinates: polygon(coordinates ?? null) };
    case 'MultiPolygon': {
      const polygons = array(coordinates);
      if (polygons.length === 0) invalidFilter('a multipolygon needs a polygon');
      return { type: 'MultiPolygon', coordinates: polygons.map(polygon) };
    }
    default:
      return invalidFilter(
        `unsupported geometry type "${String(value.type).slice(0, 30)}" (Point, Polygon, MultiPolygon or bbox)`,
      );
  }
}

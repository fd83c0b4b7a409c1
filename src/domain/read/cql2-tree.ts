import { ValidationError } from '../errors.ts';
import type { PropertyField, PropertyType } from './typed-properties.ts';

// CQL2 (OGC API – Features Part 3) as a typed tree. The two encodings (cql2-text.ts, cql2-json.ts)
// parse into the same raw tree (CqlNode), whose property names are still the caller's text; checkFilter
// then resolves every name through the collection's queryables (an unknown one is a 400) and checks
// each literal against its property's type, giving a CheckedFilter that names only queryables and
// holds only typed values. The SQL side (adapters/postgres/read/cql-sql.ts) maps those to columns or
// to `data` keys passed as parameters: nothing a caller writes ever becomes SQL text or code.

/** Bounds of one filter: its size and nesting, as every other read parameter is bounded. */
export const CQL_LIMITS = {
  /** Characters of the filter text (cql2-text) or JSON (cql2-json). */
  length: 8000,
  /** Nesting of expressions (and/or/not, brackets, JSON arrays and objects). */
  depth: 20,
  /** Predicates and operands together. */
  nodes: 200,
  /** Values of one `in` list. */
  listValues: 200,
  /** Vertices of all the geometries of a filter. */
  vertices: 2000,
  /** Characters of one string literal. */
  stringLength: 1000,
} as const;

export type Comparison = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** A GeoJSON geometry in CRS84 (longitude, latitude), checked: closed rings, coordinates in range. */
export type Geometry =
  | { type: 'Point'; coordinates: [number, number] }
  | { type: 'Polygon'; coordinates: Array<Array<[number, number]>> }
  | { type: 'MultiPolygon'; coordinates: Array<Array<Array<[number, number]>>> };

/** An operand as parsed: a property name, a literal, or a spatial or temporal literal. */
export type CqlOperand =
  | { property: string }
  | { value: string | number | boolean }
  | { timestamp: string }
  | { date: string }
  | { geometry: Geometry }
  | { interval: [CqlOperand, CqlOperand] }
  | { open: true };

export type CqlNode =
  | { op: 'and' | 'or'; args: CqlNode[] }
  | { op: 'not'; arg: CqlNode }
  | { op: 'literal'; value: boolean }
  | { op: Comparison; args: [CqlOperand, CqlOperand] }
  | { op: 'between'; args: [CqlOperand, CqlOperand, CqlOperand] }
  | { op: 'in'; value: CqlOperand; list: CqlOperand[] }
  | { op: 'like'; args: [CqlOperand, CqlOperand] }
  | { op: 'isNull'; arg: CqlOperand }
  | { op: 's_intersects' | 't_intersects'; args: [CqlOperand, CqlOperand] };

/** A queryable as the SQL reads it: a column of the event, or a typed key of its `data`. */
export type PropertyRef =
  | { kind: 'fixed'; name: 'id' | 'title' | 'eventTimestamp'; type: PropertyType }
  | { kind: 'data'; key: string; type: PropertyType };

type Value = string | number | boolean;

export type CheckedFilter =
  | { op: 'and' | 'or'; args: CheckedFilter[] }
  | { op: 'not'; arg: CheckedFilter }
  | { op: 'literal'; value: boolean }
  | { op: 'compare'; operator: Comparison; ref: PropertyRef; value: Value }
  | { op: 'between'; ref: PropertyRef; low: Value; high: Value }
  | { op: 'in'; ref: PropertyRef; values: Value[] }
  | { op: 'like'; ref: PropertyRef; pattern: string }
  | { op: 'isNull'; ref: PropertyRef }
  | { op: 's_intersects'; geometry: Geometry }
  /** Instants within [from, to] (null: open), or, `toExclusive`, [from, to) (a whole day). */
  | { op: 't_intersects'; ref: PropertyRef; from: string | null; to: string | null; toExclusive: boolean };

/** The name of the geometry queryable (Part 3's convention). */
export const GEOMETRY_PROPERTY = 'geometry';

/** The fixed queryables of every collection, beside its typed properties. */
const FIXED_QUERYABLES: Record<string, PropertyRef> = {
  id: { kind: 'fixed', name: 'id', type: 'integer' },
  title: { kind: 'fixed', name: 'title', type: 'string' },
  eventTimestamp: { kind: 'fixed', name: 'eventTimestamp', type: 'date' },
};

/** A collection's queryables by name: the fixed ones, the typed properties, and `geometry`. */
type Queryables = Map<string, PropertyRef | 'geometry'>;

export function queryablesOf(fields: readonly PropertyField[]): Queryables {
  const queryables: Queryables = new Map(Object.entries(FIXED_QUERYABLES));
  queryables.set(GEOMETRY_PROPERTY, 'geometry');
  for (const field of fields) queryables.set(field.name, { kind: 'data', key: field.key, type: field.type });
  return queryables;
}

/** A 400 of the filter parameter (the spec's error body names it; the code is Part 3's exception). */
export function invalidFilter(message: string): never {
  throw new ValidationError(message, { field: 'filter', code: 'InvalidParameterValue' });
}

const FLIPPED: Record<Comparison, Comparison> = {
  '=': '=',
  '<>': '<>',
  '<': '>',
  '<=': '>=',
  '>': '<',
  '>=': '<=',
};

/** Resolves every property through the queryables and checks every literal against its type. */
export function checkFilter(node: CqlNode, queryables: Queryables): CheckedFilter {
  const ref = (operand: CqlOperand, context: string): PropertyRef => {
    if (!('property' in operand)) invalidFilter(`${context} needs a property as its first operand`);
    const found = queryables.get(operand.property);
    if (found === undefined) {
      const names = [...queryables.keys()].slice(0, 50).join(', ');
      invalidFilter(`unknown property "${operand.property}" in filter (queryables: ${names})`);
    }
    if (found === 'geometry') invalidFilter(`"${operand.property}" is the geometry: use s_intersects`);
    return found;
  };
  const check = (current: CqlNode): CheckedFilter => {
    switch (current.op) {
      case 'and':
      case 'or':
        return { op: current.op, args: current.args.map(check) };
      case 'not':
        return { op: 'not', arg: check(current.arg) };
      case 'literal':
        return current;
      case 'between': {
        const [value, low, high] = current.args;
        const target = ref(value, 'between');
        if (target.type === 'string' || target.type === 'boolean') {
          invalidFilter(`between needs a number or date property; "${nameOf(value)}" is a ${target.type}`);
        }
        return { op: 'between', ref: target, low: literal(low, target), high: literal(high, target) };
      }
      case 'in': {
        const target = ref(current.value, 'in');
        return { op: 'in', ref: target, values: current.list.map((item) => literal(item, target)) };
      }
      case 'like': {
        const target = ref(current.args[0], 'like');
        if (target.type !== 'string') {
          invalidFilter(`like needs a string property; "${nameOf(current.args[0])}" is a ${target.type}`);
        }
        const pattern = String(literal(current.args[1], target));
        // `\\` escapes the next character (as in CQL2 and SQL); one at the very end escapes nothing.
        if (/(^|[^\\])(\\\\)*\\$/.test(pattern))
          invalidFilter('a like pattern must not end with a lone "\\"');
        return { op: 'like', ref: target, pattern };
      }
      case 'isNull':
        return { op: 'isNull', ref: ref(current.arg, 'isNull') };
      case 's_intersects': {
        const [a, b] = current.args;
        const [property, geometry] = 'geometry' in a ? [b, a] : [a, b];
        if (!('property' in property) || queryables.get(property.property) !== 'geometry') {
          invalidFilter(`s_intersects needs the property "${GEOMETRY_PROPERTY}" and a geometry`);
        }
        if (!('geometry' in geometry))
          invalidFilter('s_intersects needs a geometry literal (POINT, POLYGON, BBOX)');
        return { op: 's_intersects', geometry: geometry.geometry };
      }
      case 't_intersects': {
        const [a, b] = current.args;
        const [property, time] = 'property' in a ? [a, b] : [b, a];
        const target = ref(property, 't_intersects');
        if (target.type !== 'date')
          invalidFilter(`t_intersects needs a date property; "${nameOf(property)}" is not`);
        return temporal(target, time);
      }
      default: {
        const [a, b] = current.args;
        const flip = !('property' in a) && 'property' in b;
        const [left, right] = flip ? [b, a] : [a, b];
        const target = ref(left, current.op);
        if ('property' in right)
          invalidFilter('comparing two properties is not supported; compare a property with a value');
        if (target.type === 'boolean' && current.op !== '=' && current.op !== '<>') {
          invalidFilter(`"${nameOf(left)}" is a boolean: compare it with = or <>`);
        }
        return {
          op: 'compare',
          operator: flip ? FLIPPED[current.op] : current.op,
          ref: target,
          value: literal(right, target),
        };
      }
    }
  };
  return check(node);
}

function nameOf(operand: CqlOperand): string {
  return 'property' in operand ? operand.property : '?';
}

/** A literal as the type of the property it is compared with; anything else is a 400. */
function literal(operand: CqlOperand, target: PropertyRef): Value {
  const name = target.kind === 'fixed' ? target.name : target.key;
  const mismatch = (): never =>
    invalidFilter(`the value compared with "${name}" must be a ${describe(target.type)}`);
  switch (target.type) {
    case 'integer':
    case 'number':
      return 'value' in operand && typeof operand.value === 'number' ? operand.value : mismatch();
    case 'boolean':
      return 'value' in operand && typeof operand.value === 'boolean' ? operand.value : mismatch();
    case 'string':
      return 'value' in operand && typeof operand.value === 'string' ? operand.value : mismatch();
    case 'date': {
      if ('timestamp' in operand) return operand.timestamp;
      if ('date' in operand) return operand.date;
      return mismatch();
    }
  }
}

function describe(type: PropertyType): string {
  return type === 'date' ? 'TIMESTAMP(...) or DATE(...)' : type === 'integer' ? 'number' : type;
}

/** t_intersects with an instant, a day or an interval: the range of instants it matches. */
function temporal(target: PropertyRef, time: CqlOperand): CheckedFilter {
  if ('timestamp' in time)
    return { op: 't_intersects', ref: target, from: time.timestamp, to: time.timestamp, toExclusive: false };
  if ('date' in time)
    return { op: 't_intersects', ref: target, from: time.date, to: nextDay(time.date), toExclusive: true };
  if (!('interval' in time)) invalidFilter('t_intersects needs TIMESTAMP(...), DATE(...) or INTERVAL(...)');
  const end = (operand: CqlOperand, which: 'start' | 'end'): { at: string | null; exclusive: boolean } => {
    if ('open' in operand) return { at: null, exclusive: false };
    if ('timestamp' in operand) return { at: operand.timestamp, exclusive: false };
    // A date as an end covers its whole day: from its start, or up to the next day's.
    if ('date' in operand)
      return which === 'start'
        ? { at: operand.date, exclusive: false }
        : { at: nextDay(operand.date), exclusive: true };
    return invalidFilter('an INTERVAL holds timestamps, dates or ".."');
  };
  const from = end(time.interval[0], 'start');
  const to = end(time.interval[1], 'end');
  if (from.at !== null && to.at !== null && from.at > to.at)
    invalidFilter("an INTERVAL's start must not be after its end");
  return { op: 't_intersects', ref: target, from: from.at, to: to.at, toExclusive: to.exclusive };
}

function nextDay(date: string): string {
  return new Date(Date.parse(date) + 86_400_000).toISOString();
}

/** A TIMESTAMP literal as an ISO instant in UTC; a 400 when it is not one. */
export function timestampLiteral(text: string): string {
  const match = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/i.exec(text);
  const millis = match ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(millis))
    invalidFilter(`"${text.slice(0, 40)}" is not a timestamp such as 2024-01-31T12:00:00Z`);
  return new Date(millis).toISOString();
}

/** A DATE literal as the instant its day starts (UTC); a 400 when it is not one. */
export function dateLiteral(text: string): string {
  const millis = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
  if (!Number.isFinite(millis) || new Date(millis).toISOString().slice(0, 10) !== text) {
    invalidFilter(`"${text.slice(0, 40)}" is not a date such as 2024-01-31`);
  }
  return new Date(millis).toISOString();
}

/** Counts nodes and geometry vertices of a parse as it goes; a 400 past the limits. */
export class Budget {
  nodes = 0;
  vertices = 0;
  node(): void {
    this.nodes += 1;
    if (this.nodes > CQL_LIMITS.nodes) invalidFilter(`the filter has more than ${CQL_LIMITS.nodes} terms`);
  }
  depth(depth: number): void {
    if (depth > CQL_LIMITS.depth) invalidFilter(`the filter is nested more than ${CQL_LIMITS.depth} deep`);
  }
  vertex(count = 1): void {
    this.vertices += count;
    if (this.vertices > CQL_LIMITS.vertices)
      invalidFilter(`the filter's geometries have more than ${CQL_LIMITS.vertices} vertices`);
  }
}

/** A position in CRS84, checked: two finite numbers within range. */
export function position(values: readonly unknown[]): [number, number] {
  if (values.length !== 2 || values.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    invalidFilter('a position is two numbers, longitude and latitude (CRS84; no height)');
  }
  const [lon, lat] = values as [number, number];
  if (lon < -180 || lon > 180 || lat < -90 || lat > 90) {
    invalidFilter(`a position must lie within longitude -180..180 and latitude -90..90 (got ${lon} ${lat})`);
  }
  return [lon, lat];
}

/** A ring, checked: at least four positions, the last equal to the first. */
export function ring(positions: Array<[number, number]>): Array<[number, number]> {
  const first = positions[0];
  const last = positions.at(-1);
  if (positions.length < 4 || !first || !last || first[0] !== last[0] || first[1] !== last[1]) {
    invalidFilter('a polygon ring needs at least four positions, the last equal to the first');
  }
  return positions;
}

/** BBOX(w, s, e, n) as a polygon; w > e crosses the antimeridian (two polygons). */
export function bboxGeometry(values: readonly unknown[]): Geometry {
  if (values.length !== 4) invalidFilter('a bbox is four numbers: west, south, east, north (no height)');
  const [west, south] = position(values.slice(0, 2));
  const [east, north] = position(values.slice(2, 4));
  if (south > north) invalidFilter('a bbox south must not exceed its north');
  const box = (w: number, e: number): Array<Array<[number, number]>> => [
    [
      [w, south],
      [e, south],
      [e, north],
      [w, north],
      [w, south],
    ],
  ];
  if (west <= east) return { type: 'Polygon', coordinates: box(west, east) };
  return { type: 'MultiPolygon', coordinates: [box(west, 180), box(-180, east)] };
}

/** A filter with an items request's bbox and datetime (a half-open range) added to it. */
export function withPlace(
  filter: CheckedFilter,
  bounds: { west: number; south: number; east: number; north: number } | null,
  dates: { from: string | null; to: string | null },
): CheckedFilter {
  const args = [filter];
  if (bounds) {
    args.push({
      op: 's_intersects',
      geometry: bboxGeometry([bounds.west, bounds.south, bounds.east, bounds.north]),
    });
  }
  if (dates.from !== null || dates.to !== null) {
    const ref = FIXED_QUERYABLES.eventTimestamp as PropertyRef;
    args.push({ op: 't_intersects', ref, from: dates.from, to: dates.to, toExclusive: true });
  }
  return args.length === 1 ? filter : { op: 'and', args };
}

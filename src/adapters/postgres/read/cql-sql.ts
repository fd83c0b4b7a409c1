import type { CheckedFilter, PropertyRef } from '../../../domain/read/cql2-tree.ts';
import {
  DATE_TEXT,
  FALSE_WORDS,
  NUMBER_TEXT,
  type PropertyField,
  TRUE_WORDS,
  WHOLE_NUMBER_JSON_LIMIT,
  ZONE_SUFFIX_TEXT,
} from '../../../domain/read/typed-properties.ts';
import { sql } from '../database.ts';
import { joinSql, type Sql, sqlText } from '../sql-text.ts';

// A checked CQL2 filter (src/domain/read/cql2-tree.ts) as a condition on `events e`. Every value is a
// parameter, and so is every `data` key: a property name never becomes SQL text (GeoServer's
// CVE-2024-36401 came from evaluating property names), only one of the fixed columns below or
// `e.data -> $key`. A data property is read as typed-properties.ts types it: the fields, names and
// types come from its propertyFields, the grammars and limits from its constants (NUMBER_TEXT,
// DATE_TEXT, ZONE_SUFFIX_TEXT, TRUE_WORDS, FALSE_WORDS, WHOLE_NUMBER_JSON_LIMIT), so a filter matches
// the values the features show. Only the conversion's mechanics are written twice, in TypeScript
// (typedValue, for OGC items read row by row) and here in SQL, because a filter must run in the
// database and the GeoJSON export streams JSON the database builds (typedPropertiesJson) without
// parsing rows; test/integration/read/ogc-cql2.test.ts holds the two to the same values.

function dataValue(key: string): Sql {
  return sqlText`(e.data -> ${key}::text)`;
}

/** The SQL value of a queryable, typed as its property is. */
function expression(ref: PropertyRef): Sql {
  if (ref.kind === 'fixed') {
    if (ref.name === 'id') return sqlText`e.id::numeric`;
    if (ref.name === 'title') return sqlText`e.title`;
    return sqlText`e.event_timestamp`;
  }
  const value = dataValue(ref.key);
  const text = sqlText`(${value} #>> '{}')`;
  switch (ref.type) {
    case 'string':
      return sqlText`(e.data ->> ${ref.key}::text)`;
    case 'integer':
    case 'number': {
      const number = sqlText`(case jsonb_typeof(${value}) when 'number' then ${text}::numeric
        when 'string' then case when ${text} ~ ${NUMBER_TEXT}::text then btrim(${text})::numeric end end)`;
      return ref.type === 'integer'
        ? sqlText`(case when ${number} = trunc(${number}) then ${number} end)`
        : number;
    }
    case 'boolean':
      return sqlText`(case jsonb_typeof(${value}) when 'boolean' then ${value}::boolean
        when 'string' then case when lower(btrim(${text})) = any(${sql.array([...TRUE_WORDS], 'text')}) then true
                                when lower(btrim(${text})) = any(${sql.array([...FALSE_WORDS], 'text')}) then false end end)`;
    case 'date':
      // A date without a zone is UTC, as typedValue reads it.
      return sqlText`(case when jsonb_typeof(${value}) = 'string' and btrim(${text}) ~ ${DATE_TEXT}::text
        then chronomap_try_timestamptz(case when btrim(${text}) ~ ${ZONE_SUFFIX_TEXT}::text or length(btrim(${text})) = 10
                                            then btrim(${text}) else btrim(${text}) || 'Z' end) end)`;
  }
}

/** A literal as a parameter of its property's SQL type. */
function literal(ref: PropertyRef, value: string | number | boolean): Sql {
  switch (ref.type) {
    case 'integer':
    case 'number':
      return sqlText`${String(value)}::numeric`;
    case 'boolean':
      return sqlText`${Boolean(value)}::boolean`;
    case 'date':
      return sqlText`${String(value)}::timestamptz`;
    case 'string':
      return sqlText`${String(value)}::text`;
  }
}

const ARRAY_TYPE = {
  integer: 'numeric',
  number: 'numeric',
  boolean: 'bool',
  date: 'timestamptz',
  string: 'text',
} as const;

const OPERATORS = {
  '=': sqlText`=`,
  '<>': sqlText`<>`,
  '<': sqlText`<`,
  '<=': sqlText`<=`,
  '>': sqlText`>`,
  '>=': sqlText`>=`,
};

/** The filter as one boolean condition on `events e`. */
export function filterCondition(filter: CheckedFilter): Sql {
  switch (filter.op) {
    case 'and':
    case 'or':
      return sqlText`(${joinSql(filter.args.map(filterCondition), filter.op === 'and' ? ' and ' : ' or ')})`;
    case 'not':
      return sqlText`(not ${filterCondition(filter.arg)})`;
    case 'literal':
      return filter.value ? sqlText`true` : sqlText`false`;
    case 'compare':
      return sqlText`(${expression(filter.ref)} ${OPERATORS[filter.operator]} ${literal(filter.ref, filter.value)})`;
    case 'between':
      return sqlText`(${expression(filter.ref)} between ${literal(filter.ref, filter.low)} and ${literal(filter.ref, filter.high)})`;
    case 'in': {
      const values = filter.values.map((value) => (typeof value === 'boolean' ? value : String(value)));
      return sqlText`(${expression(filter.ref)} = any(${sql.array(values as never, ARRAY_TYPE[filter.ref.type])}))`;
    }
    case 'like':
      return sqlText`(${expression(filter.ref)} like ${filter.pattern}::text)`;
    case 'isNull':
      return sqlText`(${expression(filter.ref)} is null)`;
    case 's_intersects':
      // Whatever location the caller may see: today the event's own location (the publishing work
      // will put a generalised one here for callers who may not see the exact point).
      return sqlText`(e.location is not null and st_intersects(e.location,
        st_makevalid(st_setsrid(st_geomfromgeojson(${JSON.stringify(filter.geometry)}::text), 4326))))`;
    case 't_intersects': {
      const value = expression(filter.ref);
      const parts = [sqlText`true`];
      if (filter.from !== null) parts.push(sqlText`${value} >= ${filter.from}::timestamptz`);
      if (filter.to !== null) {
        parts.push(
          filter.toExclusive
            ? sqlText`${value} < ${filter.to}::timestamptz`
            : sqlText`${value} <= ${filter.to}::timestamptz`,
        );
      }
      return sqlText`(${joinSql(parts, ' and ')})`;
    }
  }
}

/**
 * The text of one typed property of `events e` (null when its value does not convert), as
 * typedPropertiesJson reads it: for the KML export's SimpleData.
 */
export function typedPropertyText(field: PropertyField): Sql {
  const value = expression({ kind: 'data', key: field.key, type: field.type });
  return field.type === 'date'
    ? sqlText`to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : sqlText`${value}::text`;
}

/**
 * The typed properties of `events e` as JSON members (`,"mag":4.5,...`), as jsonProperties of
 * typed-properties.ts writes them (a whole number of a `number` field as `3.0`); `''` without fields.
 * The names come from the dataset's schema version and go in as parameters too.
 */
export function typedPropertiesJson(fields: readonly PropertyField[]): Sql {
  if (fields.length === 0) return sqlText`''`;
  const members = fields.map((field) => {
    const value = expression({ kind: 'data', key: field.key, type: field.type });
    const json =
      field.type === 'number'
        ? sqlText`case when ${value} = trunc(${value}) and abs(${value}) < ${String(WHOLE_NUMBER_JSON_LIMIT)}::numeric then trunc(${value})::text || '.0'
                       else ${value}::text end`
        : field.type === 'integer' || field.type === 'boolean'
          ? sqlText`${value}::text`
          : field.type === 'date'
            ? sqlText`to_json(to_char(${value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`
            : sqlText`to_json(${value})::text`;
    return sqlText`',' || to_json(${field.name}::text)::text || ':' || coalesce(${json}, 'null')`;
  });
  return sqlText`(${joinSql(members, ' || ')})`;
}

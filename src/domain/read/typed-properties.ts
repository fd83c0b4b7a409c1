// Typed properties: a dataset's fields as top-level properties of a feature, each with one type, so
// that GIS clients (GDAL, QGIS, geopandas) see `mag` as a real number instead of one `data` JSON
// string. The one rule every serializer calls (OGC items today; the exports of issue 36 later):
// which properties a dataset has (propertyFields), their values for an event (typedProperties) and
// their JSON Schema (propertySchemas, for /queryables and /schema). The fields come from the
// dataset's latest schema version (the ingest pipeline's detectSchema, src/domain/ingest/schema.ts).
//
// Rules:
// - A field keeps its name, unless it collides with a fixed property (FIXED_PROPERTIES) or with a
//   name given before it: then it is prefixed with `data_` until it is unique (`title` → `data_title`).
// - Its value is the event's `data[field]` converted to the field's type; a value that does not
//   convert (a word in a number column, an empty cell) is null, never another type, so that every
//   feature of a collection has the same property types on every page and every read.
// - A dataset without a schema version (events written through the API, not imported) has no typed
//   properties: its features carry the fixed ones and `data`.

/** The properties every feature carries, whatever its dataset (and the feature's own `id`). */
const FIXED_PROPERTIES = [
  'id',
  'title',
  'eventTimestamp',
  'dataset',
  'catalog',
  'data',
  'provenance',
] as const;

export type PropertyType = 'integer' | 'number' | 'boolean' | 'date' | 'string';

/** A typed property: its name in the feature, the key of `data` it reads, and its type. */
export type PropertyField = { name: string; key: string; type: PropertyType };

/** A field of a schema version as stored (src/domain/ingest/schema.ts, FieldSchema). */
export type StoredField = { name: string; type: string };

const COLLISION_PREFIX = 'data_';

/** The typed properties of a dataset from its schema version's fields, in the fields' order. */
export function propertyFields(fields: readonly StoredField[]): PropertyField[] {
  const taken = new Set<string>(FIXED_PROPERTIES);
  const result: PropertyField[] = [];
  for (const field of fields) {
    if (typeof field.name !== 'string' || field.name === '') continue;
    let name = field.name;
    while (taken.has(name)) name = `${COLLISION_PREFIX}${name}`;
    taken.add(name);
    result.push({ name, key: field.name, type: propertyType(field.type) });
  }
  return result;
}

function propertyType(stored: string): PropertyType {
  return stored === 'integer' || stored === 'number' || stored === 'boolean' || stored === 'date'
    ? stored
    : 'string';
}

/**
 * A number as the typed rule reads it: a JSON number, or a string that is a plain decimal number
 * (an exponent of at most two digits, so that it stays a finite double). The SQL of the filters
 * (adapters/postgres/read/cql-sql.ts) reads the same grammar: NUMBER_TEXT.
 */
export const NUMBER_TEXT = '^\\s*[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]{1,2})?\\s*$';
const NUMBER = new RegExp(NUMBER_TEXT);

/** Words that read as a boolean (the ingest pipeline's boolean columns), lower-cased and trimmed. */
export const TRUE_WORDS = ['true', 'yes', 'ja', 'sí', 'si', 'oui'] as const;
export const FALSE_WORDS = ['false', 'no', 'nein', 'non'] as const;

/** An ISO 8601 date or date-time; one without a zone is UTC (as at import). */
export const DATE_TEXT =
  '^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?)?$';
const DATE = new RegExp(DATE_TEXT);
/** A date-time's zone at its end; without one it is read as UTC. */
export const ZONE_SUFFIX_TEXT = '(Z|[+-][0-9]{2}:?[0-9]{2})$';
const ZONE_SUFFIX = new RegExp(ZONE_SUFFIX_TEXT);
/** Below this magnitude a whole number of a `number` field is written `3.0` in JSON (jsonProperties). */
export const WHOLE_NUMBER_JSON_LIMIT = 1e15;

/** One value converted to a type, or null when it does not convert. */
export function typedValue(value: unknown, type: PropertyType): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
    case 'number': {
      const number =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && NUMBER.test(value)
            ? Number(value)
            : NaN;
      if (!Number.isFinite(number)) return null;
      return type === 'integer' && !Number.isInteger(number) ? null : number;
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (typeof value !== 'string') return null;
      const word = value.trim().toLowerCase();
      if ((TRUE_WORDS as readonly string[]).includes(word)) return true;
      if ((FALSE_WORDS as readonly string[]).includes(word)) return false;
      return null;
    }
    case 'date': {
      if (typeof value !== 'string' || !DATE.test(value.trim())) return null;
      const text = value.trim();
      const zoned = ZONE_SUFFIX.test(text) || text.length === 10 ? text : `${text.replace(' ', 'T')}Z`;
      const millis = Date.parse(zoned.replace(' ', 'T'));
      return Number.isFinite(millis) ? new Date(millis).toISOString() : null;
    }
    case 'string':
      return typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
}

/** The typed properties of one event's `data`, in the fields' order (own properties only). */
export function typedProperties(
  fields: readonly PropertyField[],
  data: Record<string, unknown>,
): Record<string, string | number | boolean | null> {
  return Object.fromEntries(
    fields.map((field) => [
      field.name,
      typedValue(Object.hasOwn(data, field.key) ? data[field.key] : null, field.type),
    ]),
  );
}

/** JSON.rawJSON (Node 21+; not in the ES2023 typings): a value JSON.stringify writes as the given text. */
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/**
 * typedProperties for a JSON encoding (GeoJSON): a whole number of a `number` field is written with a
 * decimal point (`3.0`), because clients that take a field's type from the values of the first page
 * (GDAL's OAPIF and GeoJSON drivers, QGIS) would otherwise make it an integer on a page where every
 * magnitude happens to be whole, and a real on the next.
 */
export function jsonProperties(
  fields: readonly PropertyField[],
  data: Record<string, unknown>,
): Record<string, unknown> {
  const properties: Record<string, unknown> = typedProperties(fields, data);
  for (const field of fields) {
    const value = properties[field.name];
    if (
      field.type === 'number' &&
      typeof value === 'number' &&
      Number.isInteger(value) &&
      Math.abs(value) < WHOLE_NUMBER_JSON_LIMIT
    ) {
      properties[field.name] = rawJson(value.toFixed(1));
    }
  }
  return properties;
}

/** JSON Schema of one property type (2020-12, as OGC API – Features Part 3 and Part 5 use it). */
function typeSchema(type: PropertyType): Record<string, unknown> {
  switch (type) {
    case 'integer':
      return { type: 'integer' };
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'date':
      return { type: 'string', format: 'date-time' };
    case 'string':
      return { type: 'string' };
  }
}

/**
 * The schema of each typed property, by name. A value that did not convert is null; the type stays a
 * single one (not `[type, "null"]`), which is what GDAL's OAPIF driver reads from `describedby`.
 */
export function propertySchemas(fields: readonly PropertyField[]): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    fields.map((field) => [
      field.name,
      {
        title: field.key,
        ...typeSchema(field.type),
        ...(field.name !== field.key
          ? { description: `The field "${field.key}" (renamed: it collides)` }
          : {}),
      },
    ]),
  );
}

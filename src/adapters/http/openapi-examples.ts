// Examples for the OpenAPI document (issue 35 item 5: an example on every operation). A body whose
// route gives no example of its own (TypeBox `examples: [...]` on the schema, which @fastify/swagger
// moves into the document) gets one made from its schema here: the schema's own `examples`,
// `default`, `const` or first `enum` value where it has one, otherwise a plain value of its type
// that meets its bounds, formats and patterns. test/integration/service/openapi.test.ts checks that
// every body of every operation has an example and that each one is valid against its schema.

type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;

/** Strings a `pattern` of the document may ask for: the first one it matches is used. */
const PATTERN_CANDIDATES = [
  'example',
  '1',
  'eventTimestamp',
  '2024-05-01T10:00',
  '2024-05-01',
  'a'.repeat(64),
];

const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': '2024-05-01T10:00:00.000Z',
  date: '2024-05-01',
  email: 'ada@example.org',
  uri: 'https://example.org/events.csv',
  url: 'https://example.org/events.csv',
  uuid: '6f1c1a52-3f0e-4c36-9a53-0f2b8c1d7e41',
  binary: 'title,date,latitude,longitude\n',
};

/** Readable strings for a few property names (a plain string is otherwise `example`). */
function namedString(name: string | undefined): string | undefined {
  if (!name) return undefined;
  if (/email/i.test(name)) return 'ada@example.org';
  if (/password/i.test(name)) return 'correct horse battery staple';
  if (/url$/i.test(name)) return 'https://example.org/events.csv';
  if (/slug$/i.test(name)) return 'city-events';
  if (/^(title|name|label)$/i.test(name)) return 'City events';
  return undefined;
}

/** An example of `schema`, `$ref`s resolved against the document's `components.schemas`. */
export function exampleOf(schema: unknown, components: Schema, name?: string, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return undefined;
  const s = schema as Schema;
  if (typeof s.$ref === 'string') {
    const target = components[s.$ref.replace('#/components/schemas/', '')];
    return exampleOf(target, components, name, depth + 1);
  }
  if ('example' in s) return s.example;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if ('const' in s) return s.const;
  if ('default' in s) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  if (Array.isArray(branches)) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0];
    return exampleOf(branch, components, name, depth + 1);
  }
  if (Array.isArray(s.allOf)) {
    const parts = s.allOf.map((part) => exampleOf(part, components, name, depth + 1));
    return parts.every((part) => part && typeof part === 'object' && !Array.isArray(part))
      ? Object.assign({}, ...parts)
      : parts[0];
  }
  const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string | undefined];
  const type = types.find((t) => t !== 'null') ?? types[0] ?? (s.properties ? 'object' : undefined);
  switch (type) {
    case 'object':
      return objectExample(s, components, depth);
    case 'array': {
      const count = Math.min(
        Math.max((s.minItems as number | undefined) ?? 1, 1),
        (s.maxItems as number | undefined) ?? Infinity,
      );
      const item = exampleOf(s.items, components, undefined, depth + 1);
      return item === undefined ? [] : Array.from({ length: count }, () => item);
    }
    case 'string':
      return stringExample(s, name);
    case 'integer':
    case 'number':
      return numberExample(s, type);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return undefined;
  }
}

function objectExample(s: Schema, components: Schema, depth: number): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, property] of Object.entries((s.properties ?? {}) as Schema)) {
    const value = exampleOf(property, components, key, depth + 1);
    if (value !== undefined) result[key] = value;
  }
  return result;
}

function stringExample(s: Schema, name: string | undefined): string {
  const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : undefined;
  const fits = (text: string) =>
    (!pattern || pattern.test(text)) &&
    text.length >= ((s.minLength as number | undefined) ?? 0) &&
    text.length <= ((s.maxLength as number | undefined) ?? Infinity);
  const format = typeof s.format === 'string' ? FORMAT_EXAMPLES[s.format] : undefined;
  const preferred = [format, namedString(name), 'example'].filter(
    (text): text is string => text !== undefined,
  );
  for (const text of [...preferred, ...PATTERN_CANDIDATES]) if (fits(text)) return text;
  const minLength = (s.minLength as number | undefined) ?? 0;
  return 'x'.repeat(Math.max(minLength, 1));
}

function numberExample(s: Schema, type: string): number {
  let value = 1;
  const minimum = s.minimum as number | undefined;
  const maximum = s.maximum as number | undefined;
  const exclusiveMinimum = s.exclusiveMinimum as number | undefined;
  if (minimum !== undefined && value < minimum) value = minimum;
  if (exclusiveMinimum !== undefined && value <= exclusiveMinimum) value = exclusiveMinimum + 1;
  if (maximum !== undefined && value > maximum) value = maximum;
  return type === 'integer' ? Math.trunc(value) : value;
}

/** Media types whose bodies are bytes: no example is given for them. */
function isBinary(media: Schema): boolean {
  const schema = media.schema as Schema | undefined;
  return schema?.type === 'string' && schema.format === 'binary';
}

/**
 * Gives every request body and every 2xx answer body of `operation` an `example` (a media type
 * object with `example` or `examples` keeps its own; so does a binary body).
 */
export function addExamples(operation: Schema, components: Schema): void {
  const requestBody = operation.requestBody as { content?: Record<string, Schema> } | undefined;
  const bodies = [requestBody?.content];
  for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Schema>)) {
    if (status.startsWith('2')) bodies.push(response.content as Record<string, Schema> | undefined);
  }
  for (const content of bodies) {
    for (const media of Object.values(content ?? {})) {
      if ('example' in media || 'examples' in media || isBinary(media)) continue;
      const example = exampleOf(media.schema, components);
      if (example !== undefined) media.example = example;
    }
  }
}

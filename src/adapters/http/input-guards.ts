import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { ValidationError } from '../../domain/errors.ts';
import { FORBIDDEN_KEYS } from '../../domain/forbidden-keys.ts';

// Guards every request meets before a route sees it, so that a hostile value is a 400 naming it
// rather than a 500 from the database or a change to Object.prototype:
// - NUL characters anywhere in the URL or in a JSON string (PostgreSQL text cannot hold them);
// - the keys __proto__, constructor and prototype in query strings and JSON bodies;
// - numbers in paths and query strings written strictly in decimal (no Infinity, 1e400, +1, 0x10,
//   which Ajv's coercion would accept) and integers within PostgreSQL's integer range.

/** PostgreSQL's `integer`: every id and count the API takes fits in it. */
const INTEGER_RANGE = { minimum: -2_147_483_648, maximum: 2_147_483_647 } as const;

const STRICT_INTEGER = /^-?(0|[1-9]\d{0,15})$/;
const STRICT_NUMBER = /^-?(0|[1-9]\d{0,14})(\.\d{1,15})?$/;
/** Years 0001-9999 (date-range.ts): the format already asks for four digits. */
const SUPPORTED_DATE_TIME = '^(?!0000)';
const KEY_SEGMENT = /(?:^|\[)(__proto__|constructor|prototype)(?:\]|$)/;

function refuse(message: string, code: string, field?: string): never {
  throw new ValidationError(message, { code, ...(field ? { field } : {}) });
}

export function installInputGuards(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const url = request.url;
    if (url.includes('\u0000') || /%00/i.test(url))
      refuse('the URL holds a NUL character (%00)', 'NUL_CHARACTER');
    refuseForbiddenQueryKeys(request);
  });

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseHostileJson(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  app.addHook('onRoute', (route) => strictNumbers(route));
}

function refuseForbiddenQueryKeys(request: FastifyRequest): void {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query) return;
  for (const key of Object.keys(query)) {
    const match = KEY_SEGMENT.exec(key);
    if (match) refuse(`query parameter "${key}" uses the forbidden key "${match[1]}"`, 'FORBIDDEN_KEY', key);
  }
}

/**
 * JSON.parse with a reviver that refuses what PostgreSQL or our objects cannot take safely. JSON's
 * own `__proto__` key is an own property, harmless until a spread or Object.assign copies it.
 */
export function parseHostileJson(text: string): unknown {
  if (text.trim() === '') refuse('the JSON body is empty', 'INVALID_JSON');
  try {
    return JSON.parse(text, function (this: unknown, key: string, value: unknown) {
      if (FORBIDDEN_KEYS.has(key))
        throw new HostileJson(`the JSON key "${key}" is not allowed`, 'FORBIDDEN_KEY');
      if (typeof value === 'string' && value.includes('\u0000'))
        throw new HostileJson(
          `the JSON string${key ? ` "${key}"` : ''} holds a NUL character`,
          'NUL_CHARACTER',
        );
      if (key.includes('\u0000')) throw new HostileJson('a JSON key holds a NUL character', 'NUL_CHARACTER');
      if (typeof value === 'number' && !Number.isFinite(value))
        throw new HostileJson(
          `the JSON number${key ? ` "${key}"` : ''} is out of range`,
          'NUMBER_OUT_OF_RANGE',
        );
      return value;
    });
  } catch (error) {
    if (error instanceof HostileJson) refuse(error.message, error.code);
    refuse(`the body is not valid JSON: ${(error as Error).message}`, 'INVALID_JSON');
  }
}

/** A JSON form field (multipart `settings`): the same rules as a JSON body, the error naming the field. */
export function parseJsonField(text: string, field: string): unknown {
  try {
    return parseHostileJson(text);
  } catch (error) {
    throw new ValidationError(`${field}: ${(error as Error).message}`, { field, code: 'INVALID_JSON' });
  }
}

/** A multipart form field's name, refused when it would reach Object.prototype. */
export function refuseForbiddenField(name: string): void {
  if (FORBIDDEN_KEYS.has(name)) refuse(`the form field "${name}" is not allowed`, 'FORBIDDEN_KEY', name);
  if (name.includes('\u0000')) refuse('a form field name holds a NUL character', 'NUL_CHARACTER');
}

/** A positive id written strictly in decimal within PostgreSQL's integer range, or null. */
export function strictId(raw: string | undefined): number | null {
  if (raw === undefined || !STRICT_INTEGER.test(raw)) return null;
  const id = Number(raw);
  return id >= 1 && id <= INTEGER_RANGE.maximum ? id : null;
}

class HostileJson extends Error {
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

type SchemaNode = {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode | SchemaNode[];
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
  allOf?: SchemaNode[];
  additionalProperties?: SchemaNode | boolean;
  minimum?: number;
  maximum?: number;
  format?: string;
  pattern?: string;
};

function isType(node: SchemaNode, type: string): boolean {
  return node.type === type || (Array.isArray(node.type) && node.type.includes(type));
}

/**
 * Integers without a stated range get PostgreSQL's integer range, and date-times lose year 0000,
 * which ISO 8601 allows and PostgreSQL refuses (both then show in the OpenAPI document too).
 */
function boundIntegers(node: SchemaNode | undefined, seen = new Set<SchemaNode>()): void {
  if (!node || typeof node !== 'object' || seen.has(node)) return;
  seen.add(node);
  if (isType(node, 'integer')) {
    node.minimum ??= INTEGER_RANGE.minimum;
    node.maximum ??= INTEGER_RANGE.maximum;
  }
  if (node.format === 'date-time') node.pattern ??= SUPPORTED_DATE_TIME;
  for (const child of Object.values(node.properties ?? {})) boundIntegers(child, seen);
  for (const child of [node.anyOf, node.oneOf, node.allOf].flat()) boundIntegers(child, seen);
  if (Array.isArray(node.items)) node.items.forEach((child) => boundIntegers(child, seen));
  else boundIntegers(node.items, seen);
  if (typeof node.additionalProperties === 'object') boundIntegers(node.additionalProperties, seen);
}

/** The kind of number a parameter takes, or null when it takes none. */
function numberKind(node: SchemaNode | undefined): 'integer' | 'number' | null {
  if (!node) return null;
  if (isType(node, 'integer')) return 'integer';
  if (isType(node, 'number')) return 'number';
  for (const child of [...(node.anyOf ?? []), ...(node.oneOf ?? [])]) {
    const kind = numberKind(child);
    if (kind) return kind;
  }
  return null;
}

function numericParameters(schema: SchemaNode | undefined): Map<string, 'integer' | 'number'> {
  const found = new Map<string, 'integer' | 'number'>();
  for (const [name, node] of Object.entries(schema?.properties ?? {})) {
    const kind = numberKind(node);
    if (kind) found.set(name, kind);
  }
  return found;
}

function strictNumbers(route: RouteOptions): void {
  const schema = route.schema as
    { params?: SchemaNode; querystring?: SchemaNode; body?: SchemaNode } | undefined;
  if (!schema) return;
  boundIntegers(schema.params);
  boundIntegers(schema.querystring);
  boundIntegers(schema.body);
  const params = numericParameters(schema.params);
  const query = numericParameters(schema.querystring);
  if (params.size === 0 && query.size === 0) return;
  const check = async (request: FastifyRequest) => {
    checkNumbers(request.params as Record<string, unknown>, params);
    checkNumbers(request.query as Record<string, unknown>, query);
  };
  // After the route's own preValidation hooks: a route that asks who is calling first (401) keeps
  // that order, so a malformed id tells an anonymous caller nothing.
  const existing = route.preValidation;
  route.preValidation = existing ? [...[existing].flat(), check] : [check];
}

function checkNumbers(
  values: Record<string, unknown> | undefined,
  kinds: Map<string, 'integer' | 'number'>,
): void {
  if (!values) return;
  for (const [name, kind] of kinds) {
    const raw = values[name];
    for (const item of Array.isArray(raw) ? raw : [raw]) {
      if (typeof item !== 'string') continue;
      const pattern = kind === 'integer' ? STRICT_INTEGER : STRICT_NUMBER;
      if (!pattern.test(item))
        refuse(
          `${name} must be ${kind === 'integer' ? 'an integer' : 'a number'} written in decimal digits, not "${item.slice(0, 40)}"`,
          'INVALID_PARAMETER',
          name,
        );
      if (kind === 'integer') {
        const value = Number(item);
        if (value < INTEGER_RANGE.minimum || value > INTEGER_RANGE.maximum)
          refuse(
            `${name} is out of range (${INTEGER_RANGE.minimum} to ${INTEGER_RANGE.maximum})`,
            'INVALID_PARAMETER',
            name,
          );
      }
    }
  }
}

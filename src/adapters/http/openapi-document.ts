import type { SwaggerTransform, SwaggerTransformObject } from '@fastify/swagger';
import type { FastifySchema } from 'fastify';
import type { TSchema } from 'typebox';
import { keyRouteClass } from '../../domain/accounts/api-keys.ts';
import { TOKEN_COOKIE } from './authentication.ts';
import { reasonPhrase } from './error-body.ts';
import { addExamples } from './openapi-examples.ts';
import { rateLimitApplies } from './rate-limit.ts';

// The OpenAPI document's rules, applied to every route by mechanism (the @fastify/swagger
// `transform` and `transformObject` hooks), so routes added by any branch come out right without
// anyone writing these parts by hand: operationIds, security, rate-limit answers, error bodies,
// response descriptions, multipart request bodies, the parameter facts the domain parsers check and an
// example for every body (openapi-examples.ts).

declare module 'fastify' {
  interface FastifySchema {
    /**
     * A body the handler reads itself (multipart uploads): shown as the operation's requestBody in
     * the document, never given to Fastify, so nothing validates or buffers it before the handler.
     */
    documentedBody?: TSchema;
  }
}

/**
 * Facts about a parameter that the document states but Fastify must not enforce, because a domain
 * parser checks them with its own, more lenient reading (it trims, treats an empty value as absent)
 * and its own error message. Merged into the parameter's schema in the document only.
 */
const DOCUMENTED = 'x-documented';
/** Ajv must know the keyword as an annotation, or it refuses the schema in strict mode. */
export const DOCUMENTED_KEYWORDS = [DOCUMENTED];

/** `{ ...schema, 'x-documented': facts }`, typed for TypeBox options. */
export function documented(facts: Record<string, unknown>): Record<string, unknown> {
  return { [DOCUMENTED]: facts };
}

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'The token of `POST /api/users/login`, as `Authorization: Bearer <token>`.',
  },
  jwtAuth: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: "The same token in Payload CMS's scheme: `Authorization: JWT <token>`.",
  },
  cookieAuth: {
    type: 'apiKey',
    in: 'cookie',
    name: TOKEN_COOKIE,
    description: 'The session cookie `POST /api/users/login` sets.',
  },
  apiKeyAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'cmk_<id>_<secret>',
    description:
      'An API key (`POST /api/api-keys`, docs/api.md "API keys") as `Authorization: Bearer cmk_…`: its owner ' +
      'within its scope (read: GET/HEAD only) and catalogs; never the account or key routes (403 API_KEY_NOT_ALLOWED).',
  },
} as const;

/**
 * Any one scheme is enough. Derived from `config.requiresUser`; a route that checks the caller
 * itself (in its handler or its own hook) declares `schema.security: USER_SECURITY`.
 */
export const USER_SECURITY = Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] }));

const SERVERS = [{ url: '/', description: 'The instance that serves this document' }];

const RATE_LIMITED = 'x-rate-limited';
const DEEP_OBJECTS = 'x-deep-objects';

const RATE_HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed in the tightest window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in that window.',
    schema: { type: 'integer', minimum: 0 },
  },
  'X-RateLimit-Reset': {
    description: 'When that window starts afresh.',
    schema: { type: 'string', format: 'date-time' },
  },
  RateLimit: {
    description:
      'draft-ietf-httpapi-ratelimit-headers: the tightest window, `"<name>";r=<left>;t=<seconds until it starts afresh>` ' +
      '(`rows-<window>` where pages are counted in rows: docs/api.md, "Rate limits").',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'Every window that counts this request, `"<name>";q=<limit>;w=<seconds>`, comma-separated.',
    schema: { type: 'string' },
  },
};

const RATE_LIMIT_BODY = {
  type: 'object',
  required: ['success', 'error', 'message', 'limitType', 'retryAfter'],
  properties: {
    success: { type: 'boolean', const: false },
    error: { type: 'string' },
    message: { type: 'string' },
    code: { type: 'string' },
    limitType: { type: 'string', enum: ['burst', 'hourly', 'daily'] },
    retryAfter: { type: 'string', format: 'date-time' },
  },
};

const ERROR_DESCRIPTIONS: Record<string, string> = {
  400: 'Invalid parameters or body; the error body names the offending field',
  401: 'No valid credentials: log in and send the token (or the cookie)',
  403: 'Not allowed, or a quota is spent',
  404: 'Not found, or not visible to the caller',
  409: 'Conflicts with the current state',
  413: 'The body is larger than allowed',
  415: 'The body has a media type this operation does not take',
  500: 'An unexpected error; it has been logged',
  503: 'A dependency is unavailable; retry later',
};

const SUCCESS_DESCRIPTIONS: Record<string, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted: the work is queued',
  204: 'No content',
};

type Schema = Record<string, unknown>;

/** @fastify/swagger `transform`: what only the route's options know (config, documented bodies). */
const transformRoute: SwaggerTransform = ({ schema, url, route }) => {
  const source = (schema ?? {}) as Schema;
  const result: Schema = { ...source };
  const config = (route.config ?? {}) as { requiresUser?: unknown; rateLimit?: boolean };
  if (!('security' in source)) result.security = config.requiresUser ? USER_SECURITY : [];
  // A key never calls the account and key routes (keyMayCall): they do not list the key scheme.
  const methods = [route.method].flat();
  if (Array.isArray(result.security) && methods.every((method) => keyRouteClass(method, url) === 'account'))
    result.security = (result.security as Schema[]).filter((scheme) => !('apiKeyAuth' in scheme));
  if (rateLimitApplies(url, route.config)) result[RATE_LIMITED] = true;
  if (source.documentedBody && !source.body) {
    result.body = source.documentedBody;
    delete result.documentedBody;
  }
  if (source.querystring) {
    result.querystring = withDocumentedFacts(source.querystring as Schema);
    const deepObjects = deepObjectParameters(source.querystring as Schema);
    if (deepObjects.length > 0) result[DEEP_OBJECTS] = deepObjects;
  }
  if (source.params) result.params = withDocumentedFacts(source.params as Schema);
  return { schema: result as FastifySchema, url };
};

/** The parameters' schemas with their `x-documented` facts merged in. */
function withDocumentedFacts(object: Schema): Schema {
  const properties = object.properties as Record<string, Schema> | undefined;
  if (!properties) return object;
  const merged: Record<string, Schema> = {};
  for (const [name, property] of Object.entries(properties)) {
    const { [DOCUMENTED]: facts, ...rest } = property;
    merged[name] = facts ? { ...rest, ...(facts as Schema) } : property;
  }
  return { ...object, properties: merged };
}

/**
 * The bracketed parameters a querystring takes through `patternProperties` (`'^where\\[': {}`, for
 * Payload's `where[field][operator]=value`), which @fastify/swagger leaves out: each one as an
 * OpenAPI deepObject parameter, described by the querystring's own description.
 */
function deepObjectParameters(querystring: Schema): Schema[] {
  const patterns = Object.keys((querystring.patternProperties ?? {}) as Schema);
  return patterns.flatMap((pattern) => {
    const name = /^\^([A-Za-z_]+)\\\[$/.exec(pattern)?.[1];
    if (!name) return [];
    return [
      {
        in: 'query',
        name,
        required: false,
        style: 'deepObject',
        explode: true,
        schema: { type: 'object', additionalProperties: true },
        ...(querystring.description ? { description: querystring.description } : {}),
      },
    ];
  });
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** @fastify/swagger `transformObject`: the whole document, operation by operation. */
const transformDocument: SwaggerTransformObject = (documentObject) => {
  if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
  const openapiObject = documentObject.openapiObject as Schema;
  const components = (openapiObject.components ?? {}) as Schema;
  const document: Schema = {
    ...openapiObject,
    components: {
      ...components,
      schemas: { ...(components.schemas as Schema), RateLimitBody: RATE_LIMIT_BODY },
    },
  };
  const seen = new Map<string, string>();
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Schema>)) {
    for (const method of METHODS) {
      const operation = item[method] as Schema | undefined;
      if (!operation) continue;
      const where = `${method.toUpperCase()} ${path}`;
      operation.operationId ??= operationIdFor(method, path);
      const id = operation.operationId as string;
      const other = seen.get(id);
      if (other) {
        throw new Error(
          `${where} and ${other} both get the operationId "${id}": declare schema.operationId on one`,
        );
      }
      seen.set(id, where);
      completeResponses(operation);
      if (operation[DEEP_OBJECTS]) {
        operation.parameters = [
          ...((operation.parameters ?? []) as Schema[]),
          ...(operation[DEEP_OBJECTS] as Schema[]),
        ];
        delete operation[DEEP_OBJECTS];
      }
      addExamples(operation, (document.components as Schema).schemas as Schema);
    }
  }
  return document;
};

/** `GET /api/v1/datasets/{id}/schema/infer` → `getV1DatasetsByIdSchemaInfer`. */
export function operationIdFor(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((segment, index) => segment !== '' && !(index === 1 && segment === 'api'))
    .flatMap((segment) =>
      segment
        .split(/(\{[^}]*\})/)
        .filter(Boolean)
        .flatMap((part) =>
          part.startsWith('{')
            ? ['by', ...part.slice(1, -1).split(/[^A-Za-z0-9]+/)]
            : part.split(/[^A-Za-z0-9]+/),
        ),
    )
    .filter(Boolean);
  const capitalised = words.map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return `${method.toLowerCase()}${capitalised.join('') || 'Root'}`;
}

function completeResponses(operation: Schema): void {
  const responses = (operation.responses ?? {}) as Record<string, Schema>;
  const rateLimited = operation[RATE_LIMITED] === true;
  delete operation[RATE_LIMITED];
  if (Array.isArray(operation.security) && operation.security.length > 0) {
    responses[401] ??= {};
  }
  // Every 429 is sendRateLimited's body and headers, whether a request window or a daily quota (the
  // scraper runs', on the run and webhook routes) refuses: a route that declares a 429 gets it too.
  if (rateLimited || responses[429]) {
    responses[429] = {
      description: 'Rate limit exceeded: retry after `Retry-After` seconds',
      headers: {
        'Retry-After': {
          description: 'Seconds until a request is allowed again.',
          schema: { type: 'integer', minimum: 0 },
        },
        ...RATE_HEADERS,
      },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/RateLimitBody' } } },
    };
  }
  for (const [status, response] of Object.entries(responses)) {
    const code = Number(status);
    if (code >= 400 && code < 600 && !response.content) {
      response.content = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } };
    }
    if (!response.description || response.description === 'Default Response') {
      response.description = describe(status);
    }
    if (rateLimited && code >= 200 && code < 300) {
      response.headers = { ...RATE_HEADERS, ...(response.headers as Schema | undefined) };
    }
  }
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

function describe(status: string): string {
  return SUCCESS_DESCRIPTIONS[status] ?? ERROR_DESCRIPTIONS[status] ?? reasonPhrase(Number(status));
}

/** Spread into @fastify/swagger's `openapi` option (the security ignores need the schemes up front). */
export const OPENAPI_DOCUMENT_BASE = { servers: SERVERS, components: { securitySchemes: SECURITY_SCHEMES } };

/** Spread into @fastify/swagger's options. */
export const OPENAPI_DOCUMENT_HOOKS = { transform: transformRoute, transformObject: transformDocument };

import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';

// A property-based HTTP fuzzer over every route of the app's OpenAPI document (issue 16): each run
// picks a route, a caller (anonymous, user, admin) and a class of hostile input, and sends one
// request through app.inject. The property: no 5xx, an answer within a bound, Object.prototype
// unchanged. fast-check shrinks a failure to a small request and prints its seed and path.

export const FUZZ_CLASSES = [
  'numbers at the edges',
  'unicode and NUL',
  'prototype keys',
  'deep nesting',
  'huge bodies',
  'truncated multipart',
  'duplicated parameters',
] as const;
export type FuzzClass = (typeof FUZZ_CLASSES)[number];

export type Route = {
  method: string;
  path: string;
  pathParams: string[];
  queryParams: string[];
  bodyFields: string[];
  multipart: boolean;
};

type OpenApi = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: Array<{ name: string; in: string }>;
        requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, unknown> } }> };
      }
    >
  >;
};

/** Every operation of the OpenAPI document, with the names of its parameters and body fields. */
export function routesOf(document: unknown): Route[] {
  const routes: Route[] = [];
  for (const [path, operations] of Object.entries((document as OpenApi).paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!['get', 'post', 'patch', 'put', 'delete'].includes(method)) continue;
      const parameters = operation.parameters ?? [];
      const content = operation.requestBody?.content ?? {};
      const json = content['application/json']?.schema?.properties ?? {};
      routes.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        bodyFields: Object.keys(json),
        multipart: 'multipart/form-data' in content,
      });
    }
  }
  return routes;
}

const EDGE_NUMBERS = [
  '0',
  '-1',
  '1',
  '+1',
  '1e400',
  '-1e400',
  'Infinity',
  '-Infinity',
  'NaN',
  '1e16',
  '2147483647',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '99999999999999999999999',
  '0x10',
  '1.5',
  '',
  ' 1',
  '00001',
];
const HOSTILE_TEXT = [
  'a\u0000b',
  '\u0000',
  '%00',
  '\ud800',
  '😀'.repeat(50),
  'é'.repeat(300),
  '\u202e\u0000',
  "' or 1=1 --",
  '0000-01-01',
  '0000-01-01T00:00:00Z',
  '-000001-01-01',
  '275760-09-13T00:00:00Z',
  '{"north":1e400,"south":-1e400,"east":"x","west":null}',
];
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'];

/** CQL2 filters for /ogc items' `filter` (issue 35): hostile names, literals, geometries and nesting. */
const HOSTILE_FILTERS = [
  "title = 'x'",
  '__proto__ = 1',
  '"constructor" IS NULL',
  "title LIKE 'a\\'",
  "title = ''; drop table events; --'",
  'id > 1e999',
  'id BETWEEN 9 AND 1',
  "eventTimestamp < TIMESTAMP('275760-09-13T00:00:00Z')",
  "T_INTERSECTS(eventTimestamp, INTERVAL('2024-13-45', '..'))",
  'S_INTERSECTS(geometry, POLYGON((0 0, 1 1, 0 1, 1 0, 0 0)))',
  'S_INTERSECTS(geometry, POLYGON((0 0, 1 0, 1 1)))',
  'S_INTERSECTS(geometry, BBOX(180, 90, -180, -90))',
  'S_INTERSECTS(geometry, POINT(1e400 0))',
  `${'NOT '.repeat(500)}id = 1`,
  `${'('.repeat(300)}id = 1${')'.repeat(300)}`,
  `id IN (${Array.from({ length: 300 }, (_, i) => i).join(',')})`,
  '{"op":"=","args":[{"property":"__proto__"},1]}',
  '{"op":"s_intersects","args":[{"property":"geometry"},{"type":"Polygon","coordinates":[[[0,0]]]}]}',
  `${'['.repeat(2000)}`,
];
const FILTER_LANGS = ['cql2-text', 'cql2-json'] as const;

export const edgeNumber = fc.constantFrom(...EDGE_NUMBERS);
export const hostileText = fc.oneof(
  fc.constantFrom(...HOSTILE_TEXT),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

/** encodeURIComponent, except that a lone surrogate goes out as its raw UTF-8 bytes (invalid). */
export function encodePathValue(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '%ED%A0%80';
  }
}

function jsonNumberOrText(raw: string): unknown {
  const parsed = Number(raw);
  return raw !== '' && /^-?[\d.e+]+$/i.test(raw) && Number.isFinite(parsed) ? parsed : raw;
}

export type FuzzRequest = {
  /** The operation the request was made for: `METHOD /path/{param}` as the OpenAPI document names it. */
  operation: string;
  fuzzClass: FuzzClass;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
};

/** One hostile request for `route` of class `fuzzClass`, from the values fast-check draws. */
export function requestArbitrary(routes: Route[]): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      route: fc.constantFrom(...routes),
      fuzzClass: fc.constantFrom(...FUZZ_CLASSES),
      number: edgeNumber,
      text: hostileText,
      protoKey: fc.constantFrom(...PROTO_KEYS),
      depth: fc.integer({ min: 20, max: 5_000 }),
      size: fc.integer({ min: 1, max: 3 }),
      repeats: fc.integer({ min: 2, max: 5 }),
    })
    .map(({ route, fuzzClass, number, text, protoKey, depth, size, repeats }) => {
      const value = (() => {
        switch (fuzzClass) {
          case 'numbers at the edges':
          case 'duplicated parameters':
            return number;
          case 'unicode and NUL':
            return text;
          case 'prototype keys':
            return protoKey;
          default:
            return '1';
        }
      })();
      const path = route.path.replace(/\{([^}]+)\}/g, () => encodePathValue(value));
      const query = new URLSearchParams();
      for (const name of route.queryParams) {
        const times = fuzzClass === 'duplicated parameters' ? repeats : 1;
        // `filter` and `filter-lang` (OGC items, issue 35) get CQL2 of their own in every class,
        // chosen from the values already drawn, so that the other parameters' draws stay those of
        // the seed.
        const filter =
          fuzzClass === 'unicode and NUL'
            ? text
            : (HOSTILE_FILTERS[depth % HOSTILE_FILTERS.length] as string);
        const sent =
          name === 'filter' ? filter : name === 'filter-lang' ? (FILTER_LANGS[depth % 2] as string) : value;
        for (let i = 0; i < times; i += 1) query.append(name, sent);
      }
      let rawQuery = query.toString();
      if (fuzzClass === 'prototype keys')
        rawQuery += `${rawQuery ? '&' : ''}where[${protoKey}][polluted]=yes&${protoKey}=1&where[or][0][${protoKey}][equals]=x`;
      if (fuzzClass === 'deep nesting')
        rawQuery += `${rawQuery ? '&' : ''}where${'[or][0]'.repeat(Math.min(depth, 200))}[title][equals]=x`;
      const url = rawQuery ? `${path}?${rawQuery}` : path;

      const headers: Record<string, string> = {};
      let payload: string | undefined;
      if (route.method !== 'GET' && route.method !== 'DELETE') {
        if (route.multipart || fuzzClass === 'truncated multipart') {
          headers['content-type'] = 'multipart/form-data; boundary=FUZZ';
          const field = (name: string, content: string) =>
            `--FUZZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${content}\r\n`;
          const file = `--FUZZ\r\nContent-Disposition: form-data; name="file"; filename="f.csv"\r\nContent-Type: text/csv\r\n\r\ntitle,date\n${value},2024-01-01\n`;
          payload =
            field('catalog', value) +
            field(
              fuzzClass === 'prototype keys' ? protoKey : 'settings',
              fuzzClass === 'prototype keys' ? '1' : `{"${protoKey}":{"x":1}}`,
            ) +
            file +
            (fuzzClass === 'truncated multipart' ? '' : '\r\n--FUZZ--\r\n');
        } else {
          headers['content-type'] = 'application/json';
          payload = jsonBody(route, fuzzClass, { value, protoKey, depth, size });
        }
      }
      return {
        operation: `${route.method} ${route.path}`,
        fuzzClass,
        method: route.method,
        url,
        headers,
        ...(payload === undefined ? {} : { payload }),
      };
    });
}

function jsonBody(
  route: Route,
  fuzzClass: FuzzClass,
  drawn: { value: string; protoKey: string; depth: number; size: number },
): string {
  const fields = route.bodyFields.length > 0 ? route.bodyFields : ['title'];
  switch (fuzzClass) {
    case 'deep nesting':
      return `${'{"a":['.repeat(drawn.depth)}1${']}'.repeat(drawn.depth)}`;
    case 'huge bodies':
      // 1 to 3 MB: over the default 1 MB body limit.
      return JSON.stringify({ [fields[0] ?? 'title']: 'x'.repeat(drawn.size * 1024 * 1024) });
    case 'prototype keys':
      return `{"${fields[0] ?? 'title'}":"x","${drawn.protoKey}":{"polluted":"yes"},"data":{"${drawn.protoKey}":{"isAdmin":true}}}`;
    default: {
      const body: Record<string, unknown> = {};
      for (const field of fields) body[field] = jsonNumberOrText(drawn.value);
      const text = JSON.stringify(body);
      // 1e400 as a JSON literal (JSON.stringify would write null).
      return drawn.value === '1e400' ? text.replace(/"1e400"/g, '1e400') : text;
    }
  }
}

/** Object.prototype's own property names, to compare before and after. */
export function prototypeSnapshot(): string {
  return Object.getOwnPropertyNames(Object.prototype).sort().join(',');
}

export type FuzzOutcome = { request: FuzzRequest; status: number; ms: number; body: string };

/**
 * /api/health's designed 503 for a setting the fuzzer itself made: an admin's request switched
 * scrapers on (PATCH /api/feature-flags) and no runner is configured, which the report names as a
 * conflict while the database is well. Any other 5xx of health is a failure like any route's.
 */
export function isScrapersWithoutRunner(outcome: FuzzOutcome): boolean {
  if (outcome.request.operation !== 'GET /api/health' || outcome.status !== 503) return false;
  try {
    const report = JSON.parse(outcome.body) as {
      database?: { status?: string };
      environment?: { status?: string; conflicts?: unknown[]; missing?: unknown[] };
    };
    return (
      report.database?.status === 'ok' &&
      (report.environment?.conflicts?.length ?? 0) > 0 &&
      (report.environment?.missing?.length ?? 0) === 0
    );
  } catch {
    return false;
  }
}

export async function send(
  app: FastifyInstance,
  request: FuzzRequest,
  token: string | null,
): Promise<FuzzOutcome> {
  const started = performance.now();
  const response = await app.inject({
    method: request.method as 'GET',
    url: request.url,
    headers: { ...request.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    ...(request.payload === undefined ? {} : { payload: request.payload }),
  });
  return { request, status: response.statusCode, ms: performance.now() - started, body: response.body };
}

import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { edgeNumber, encodePathValue, hostileText, PROTO_KEYS } from './fuzz.ts';

// The page fuzzer's requests (issue 30 §8): the server-rendered pages and their form posts, which
// the OpenAPI document does not list. The routes come from the app's route registry; the hostile
// values are the API fuzzer's (fuzz.ts) plus what a path invites (`../`, huge ids). A post carries
// the caller's CSRF token and our Origin, so it reaches the handler, unless the draw leaves the
// token out, sends a wrong one or names another origin.

export type PageRoute = { method: 'GET' | 'POST'; url: string };

/** Every registered GET and POST route that is not the API's (/api, /ogc) nor CORS's catch-all. */
export function pageRoutesOf(registered: Array<{ method: string; url: string }>): PageRoute[] {
  const keys = new Set<string>();
  const routes: PageRoute[] = [];
  for (const { method, url } of registered) {
    if (method !== 'GET' && method !== 'POST') continue;
    if (url === '*' || url === '/api' || url.startsWith('/api/') || url === '/ogc' || url.startsWith('/ogc/'))
      continue;
    if (keys.has(`${method} ${url}`)) continue;
    keys.add(`${method} ${url}`);
    routes.push({ method, url });
  }
  return routes;
}

export const routeKey = (route: PageRoute) => `${route.method} ${route.url}`;

/** The names of the fields of every form on an HTML page. */
export function formFieldsOf(html: string): string[] {
  return [...html.matchAll(/<(?:input|select|textarea)\b[^>]*?\bname="([^"]+)"/g)].map((m) => m[1] as string);
}

const PATH_VALUES = [
  '../',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '..',
  'a/b',
  '9'.repeat(400),
  '-1',
  '0',
  '1.5',
  '1e3',
  'abc',
  ' ',
];
const QUERY_NAMES = ['next', 'notice', 'error', 'page', 'size', 'file', 'q', 'status', 'step'];

export const PAGE_ID_KINDS = ['fixture', 'edge number', 'unicode', 'path'] as const;
export const PAGE_BODIES = ['urlencoded', 'multipart', 'truncated multipart', 'huge field'] as const;
export const PAGE_TOKENS = ['valid', 'valid', 'valid', 'missing', 'wrong', 'foreign origin'] as const;
export const PAGE_QUERIES = ['none', 'none', 'hostile', 'duplicated', 'prototype keys'] as const;

export type PagePlan = {
  route: PageRoute;
  idKind: (typeof PAGE_ID_KINDS)[number];
  body: (typeof PAGE_BODIES)[number];
  token: (typeof PAGE_TOKENS)[number];
  query: (typeof PAGE_QUERIES)[number];
  pathValue: string;
  values: string[];
  fields: string[];
  protoKey: string;
};

/** One page request's shape, drawn: which route, what in its path, query and form. */
export function pagePlanArbitrary(routes: PageRoute[], formFields: string[]): fc.Arbitrary<PagePlan> {
  const value = fc.oneof(edgeNumber, hostileText, fc.constantFrom(...PROTO_KEYS));
  return fc.record({
    route: fc.constantFrom(...routes),
    idKind: fc.constantFrom(...PAGE_ID_KINDS),
    body: fc.constantFrom(...PAGE_BODIES),
    token: fc.constantFrom(...PAGE_TOKENS),
    query: fc.constantFrom(...PAGE_QUERIES),
    pathValue: fc.oneof(fc.constantFrom(...PATH_VALUES), edgeNumber, hostileText),
    values: fc.array(value, { minLength: 1, maxLength: 8 }),
    fields: fc.subarray(formFields, { maxLength: 8 }),
    protoKey: fc.constantFrom(...PROTO_KEYS),
  });
}

/** A caller's browser: its cookies (session and CSRF nonce) and the token its forms carry. */
export type Browser = { cookie: string; csrf: string };

export type PageRequest = {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  payload?: string;
};

/**
 * The request of a plan for a browser. `fixtureId(segment)` names an existing record for the path
 * segment before a parameter (`repos` → the fixture's repo), so that some requests go deep.
 */
export function pageRequest(
  plan: PagePlan,
  browser: Browser,
  fixtureId: (segment: string) => string | undefined,
): PageRequest {
  const value = (i: number) => plan.values[i % plan.values.length] ?? '';
  const segments = plan.route.url.split('/');
  const path = segments
    .map((segment, i) => {
      if (!segment.startsWith(':') && segment !== '*') return segment;
      const fixture = fixtureId(segments[i - 1] ?? '');
      if (plan.idKind === 'fixture' && fixture) return fixture;
      // `../` and friends go out raw half the time: what a hand-typed URL would be.
      if (plan.idKind === 'path' && plan.pathValue.includes('.')) return plan.pathValue;
      return encodePathValue(plan.pathValue);
    })
    .join('/');
  let query = '';
  if (plan.query !== 'none') {
    const params = new URLSearchParams();
    for (const [i, name] of QUERY_NAMES.entries())
      for (let n = 0; n < (plan.query === 'duplicated' ? 3 : 1); n += 1) params.append(name, value(i + n));
    query = params.toString();
    if (plan.query === 'prototype keys') query += `&${plan.protoKey}[polluted]=yes&${plan.protoKey}=1`;
  }
  const url = query ? `${path}?${query}` : path;
  const headers: Record<string, string> = { cookie: browser.cookie };
  if (plan.route.method === 'GET') return { method: 'GET', url, headers };

  headers.origin = plan.token === 'foreign origin' ? 'https://evil.example' : 'http://localhost';
  const form: Array<[string, string]> = plan.fields.map((name, i) => [name, value(i)]);
  // A prototype key is refused before any handler (input-guards.ts): only in the draws that test that.
  if (plan.query === 'prototype keys') form.push([plan.protoKey, value(1)]);
  if (plan.body === 'huge field') form.push([plan.fields[0] ?? 'name', 'x'.repeat(300_000)]);
  if (plan.token !== 'missing') form.unshift(['_csrf', plan.token === 'wrong' ? value(0) : browser.csrf]);
  if (plan.body === 'urlencoded' || plan.body === 'huge field') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    return { method: 'POST', url, headers, payload: new URLSearchParams(form).toString() };
  }
  headers['content-type'] = 'multipart/form-data; boundary=FUZZ';
  const part = ([name, content]: [string, string]) =>
    `--FUZZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${content}\r\n`;
  const file = `--FUZZ\r\nContent-Disposition: form-data; name="files"; filename="${value(2)}"\r\nContent-Type: text/plain\r\n\r\n${value(3)}\n`;
  const payload =
    form.map(part).join('') + file + (plan.body === 'truncated multipart' ? '' : '\r\n--FUZZ--\r\n');
  return { method: 'POST', url, headers, payload };
}

/** The cookies a response set, as a Cookie header's pairs (an emptied cookie drops out). */
export function cookiesOf(response: {
  cookies: Array<{ name: string; value: string }>;
}): Map<string, string> {
  return new Map(response.cookies.map((cookie) => [cookie.name, cookie.value]));
}

/**
 * A browser logged in through the real login form of /account (its page's CSRF cookie and token,
 * then the post), with the token its forms carry afterwards; anonymous when `login` is null.
 */
export async function browserOf(
  app: FastifyInstance,
  login: { email: string; password: string } | null,
): Promise<Browser> {
  const form = await app.inject({ method: 'GET', url: '/account/login' });
  const jar = cookiesOf(form);
  const header = () => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const token = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
  if (login === null) return { cookie: header(), csrf: token(form.body) ?? '' };
  const posted = await app.inject({
    method: 'POST',
    url: '/account/login',
    headers: {
      cookie: header(),
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'http://localhost',
    },
    payload: new URLSearchParams({ _csrf: token(form.body) ?? '', ...login }).toString(),
  });
  if (posted.statusCode !== 303)
    throw new Error(`login form: ${posted.statusCode} ${posted.body.slice(0, 200)}`);
  for (const [name, value] of cookiesOf(posted)) jar.set(name, value);
  // The token is bound to the session: read it from a page of the logged-in browser.
  const page = await app.inject({ method: 'GET', url: '/account', headers: { cookie: header() } });
  const csrf = token(page.body);
  if (!csrf) throw new Error(`no CSRF token on /account: ${page.statusCode}`);
  return { cookie: header(), csrf };
}

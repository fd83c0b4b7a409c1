import { type MatrixRow, USER } from './route-authorization-helpers.ts';
import type { MatrixFixture } from './route-authorization-fixture.ts';

// The API key column of the route authorization matrix (issue 38 §3) and the rows of the key
// routes. The owner's keys: a read-only key and a write key over all their catalogs, and a write
// key limited to another catalog of theirs (so the fixture's private catalog is outside it).
//
// The rule, stated once here and checked for every route by the matrix test:
// - key and account management (/api/users…, /api/api-keys…, /api/auth…, /api/data-exports…) and
//   the HTML /account and /dashboard pages: 403 for every key (API_KEY_NOT_ALLOWED);
// - any other non-GET/HEAD route: 403 for the read-only key (API_KEY_READ_ONLY);
// - otherwise a key answers as its owner would, except that the key for another catalog answers as
//   a stranger would about the owner's private catalog, gets 403 on every scraper route (scrapers
//   write into the catalogs their config names, so a key limited to catalogs has no scraper
//   access) and cannot create catalogs (403 API_KEY_CATALOGS; rows say so where that differs).

export const KEY_CALLERS = ['readKey', 'writeKey', 'otherCatalogKey'] as const;
export type KeyCaller = (typeof KEY_CALLERS)[number];

const SCRAPER_ROUTES = /^\/api\/scraper(?:-repos|s|-runs)(?:[/?]|$)/;
const ACCOUNT_ROUTES = /^\/(?:api\/(?:users|api-keys|auth|data-exports)|account|dashboard)(?:[/?]|$)/;

/** The statuses the owner's three keys get on a route (the row's own, or the rule above). */
export function keyExpectations(
  method: string,
  url: string,
  row: MatrixRow,
): readonly [number, number, number] {
  if (row.keys) return row.keys;
  if (ACCOUNT_ROUTES.test(url)) return [403, 403, 403];
  const [, stranger, owner] = row.expect;
  const write = method !== 'GET' && method !== 'HEAD';
  return [write ? 403 : owner, owner, SCRAPER_ROUTES.test(url) ? 403 : stranger];
}

async function ownerKey(fx: MatrixFixture): Promise<number> {
  const created = await fx.app.inject({
    method: 'POST',
    url: '/api/api-keys',
    payload: { name: 'to revoke', scope: 'read' },
    headers: { authorization: `Bearer ${fx.tokens.owner}` },
  });
  return created.json().doc.id as number;
}

export const apiKeyRows: Record<string, MatrixRow> = {
  'GET /api/api-keys': {
    expect: [401, 200, 200, 200],
    rule: 'logged-in users (a session): their own keys',
    request: () => ({ url: '/api/api-keys' }),
  },
  'POST /api/api-keys': {
    expect: [401, 201, 201, 201],
    rule: `${USER} (a session): a key of their own`,
    request: () => ({ url: '/api/api-keys', payload: { name: 'matrix', scope: 'read' } }),
  },
  'DELETE /api/api-keys/:id': {
    expect: [401, 404, 200, 404],
    rule: 'the key owner with a session; 404 for others (admins too: keys are personal)',
    request: async (fx) => ({ url: `/api/api-keys/${await ownerKey(fx)}` }),
    destructive: true,
  },
};

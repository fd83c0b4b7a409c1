import type { MatrixFixture } from './route-authorization-fixture.ts';
import { CSRF, get, type MatrixRow, OWNER, publicRead, unique, USER } from './route-authorization-helpers.ts';

// Rows of the route authorization matrix for saved views and their embeds (issue 38 §1–2): the
// fixture's owner saves a private view for each request, so every row sees a view of its own.

async function privateView(fx: MatrixFixture): Promise<string> {
  const created = await fx.app.inject({
    method: 'POST',
    url: '/api/views',
    headers: { authorization: `Bearer ${fx.tokens.owner}` },
    payload: {
      title: `View ${unique()}`,
      state: { lng: 10, lat: 50, zoom: 4 },
      embedOrigins: ['https://news.example.org'],
    },
  });
  if (created.statusCode !== 201) throw new Error(`saving a view failed: ${created.body}`);
  return (created.json() as { id: string }).id;
}

const ofView = (path: (code: string) => string, payload?: unknown) => async (fx: MatrixFixture) => ({
  url: path(await privateView(fx)),
  ...(payload === undefined ? {} : { payload }),
});

const PRIVATE_VIEW = `${OWNER} (a private view; a public one opens for everyone)`;
/**
 * A view belongs to its owner, not to a catalog: every key of the owner's acts for them on it (the
 * read-only key only reads); a key's catalog limit scopes the events the view then shows.
 */
const OWNER_KEYS = [200, 200, 200] as const;
const OWNER_WRITE_KEYS = [403, 200, 200] as const;

const feedRow = (path: (code: string) => string): MatrixRow => ({
  expect: [401, 404, 200, 200],
  keys: OWNER_KEYS,
  rule: `${OWNER} (private view; anonymous 401: an API key opens it)`,
  request: ofView(path),
});

export function viewRows(): Record<string, MatrixRow> {
  const form = (path: (code: string) => string): MatrixRow => ({
    expect: [303, 403, 403, 403],
    rule: CSRF,
    request: ofView(path, {}),
  });
  return {
    'GET /explore/save-view.js': publicRead('/explore/save-view.js'),
    'POST /api/views': {
      expect: [401, 201, 201, 201],
      rule: USER,
      request: () => ({ url: '/api/views', payload: { title: `View ${unique()}` } }),
    },
    'GET /api/views': {
      expect: [401, 200, 200, 200],
      rule: `${USER}; lists the caller's own`,
      request: get('/api/views'),
    },
    'GET /api/views/:code': {
      expect: [404, 404, 200, 200],
      keys: OWNER_KEYS,
      rule: PRIVATE_VIEW,
      request: ofView((c) => `/api/views/${c}`),
    },
    'PATCH /api/views/:code': {
      expect: [401, 404, 200, 200],
      keys: OWNER_WRITE_KEYS,
      rule: OWNER,
      request: ofView((c) => `/api/views/${c}`, { title: 'Renamed' }),
    },
    'DELETE /api/views/:code': {
      expect: [401, 404, 200, 200],
      keys: OWNER_WRITE_KEYS,
      rule: OWNER,
      request: ofView((c) => `/api/views/${c}`),
      destructive: true,
    },
    'GET /v/:code': {
      expect: [404, 404, 302, 302],
      keys: [302, 302, 302],
      rule: PRIVATE_VIEW,
      request: ofView((c) => `/v/${c}`),
    },
    // The view's feeds (issue 39 §2): a private view's ask a caller without credentials for an API
    // key (401) rather than answer 404, so feed readers prompt for one.
    'GET /v/:code/feed.atom': feedRow((c) => `/v/${c}/feed.atom`),
    'GET /v/:code/feed.json': feedRow((c) => `/v/${c}/feed.json`),
    'GET /v/:code/events.ics': feedRow((c) => `/v/${c}/events.ics`),
    'GET /embed/:code': {
      expect: [404, 404, 200, 200],
      keys: OWNER_KEYS,
      rule: PRIVATE_VIEW,
      request: ofView((c) => `/embed/${c}`),
    },
    'GET /account/views': {
      expect: [303, 200, 200, 200],
      rule: "account pages: a login (anonymous: to the login page); the caller's own views",
      request: get('/account/views'),
    },
    'POST /account/views/:code/public': form((c) => `/account/views/${c}/public`),
    'POST /account/views/:code/private': form((c) => `/account/views/${c}/private`),
    'POST /account/views/:code/embed': form((c) => `/account/views/${c}/embed`),
    'POST /account/views/:code/delete': form((c) => `/account/views/${c}/delete`),
  };
}

import {
  ADMIN,
  at,
  body,
  datasetSlug,
  get,
  IMPORT,
  type MatrixRow,
  OWNER,
  PUBLIC,
  publicRead,
  unique,
  USER,
} from './route-authorization-helpers.ts';
import { htmlRows, scheduleRows } from './route-authorization-pages.ts';
import { importListRows } from './route-authorization-imports.ts';
import { scraperRows } from './route-authorization-scrapers.ts';
import { viewRows } from './route-authorization-views.ts';
import { subscriptionRows } from './route-authorization-subscriptions.ts';
import { apiKeyRows } from './route-authorization-keys.ts';
import { provenanceRows } from './route-authorization-provenance.ts';
import { assetRows } from './route-authorization-assets.ts';
import { emailRows } from './route-authorization-email.ts';

// The route authorization matrix: for every route the app registers, what an anonymous caller, a
// stranger (another logged-in user), the owner of the fixture's resources and an admin get. The
// matrix test runs every row and fails for a registered route without one; docs/api.md shows the
// table (scripts/write-route-matrix.ts writes it, the test checks it is current).

export type { MatrixRequest, MatrixRow } from './route-authorization-helpers.ts';

export const ROUTE_MATRIX: Record<string, MatrixRow> = {
  // Public: the read API, health, docs, the Explore page and its assets.
  'GET /': publicRead('/'),
  'GET /api/health': publicRead('/api/health'),
  'GET /api/live': publicRead('/api/live'),
  'GET /api/openapi.json': publicRead('/api/openapi.json'),
  // Prometheus text for the METRICS_TOKEN bearer only (not a user role); everyone else, admins
  // included, sees an unknown route. Tested with the token in metrics.test.ts.
  'GET /api/metrics': {
    expect: [404, 404, 404, 404],
    rule: 'METRICS_TOKEN bearer only; 404 for everyone else',
    request: get('/api/metrics'),
  },
  'GET /api/docs': publicRead('/api/docs'),
  'HEAD /api/docs/': { expect: [200, 200, 200, 200], rule: PUBLIC, request: get('/api/docs/') },
  'GET /api/docs/json': publicRead('/api/docs/json'),
  'GET /api/docs/yaml': publicRead('/api/docs/yaml'),
  'GET /api/docs/static/*': publicRead('/api/docs/static/swagger-ui.css'),
  'GET /api/docs/static/index.html': {
    expect: [302, 302, 302, 302],
    rule: PUBLIC,
    request: get('/api/docs/static/index.html'),
  },
  'GET /api/docs/static/swagger-initializer.js': publicRead('/api/docs/static/swagger-initializer.js'),
  ...assetRows,
  // @fastify/cors's catch-all preflight route: answered on the public read paths only (public-web.ts).
  'OPTIONS *': {
    expect: [204, 204, 204, 204],
    rule: 'public: CORS preflight of /api/v1 and /ogc (404 on every other path)',
    request: () => ({
      url: '/api/v1/events',
      headers: { origin: 'https://maps.example.org', 'access-control-request-method': 'GET' },
    }),
  },
  'GET /api/v1/changes': publicRead('/api/v1/changes'),
  'GET /api/v1/data-sources': publicRead('/api/v1/data-sources'),
  'GET /api/v1/events.csv': publicRead('/api/v1/events.csv?catalog=news'),
  'GET /api/v1/events.geojson': publicRead('/api/v1/events.geojson'),
  'GET /api/v1/events.geojsonseq': publicRead('/api/v1/events.geojsonseq'),
  'GET /api/v1/events.kml': publicRead('/api/v1/events.kml?catalog=news'),
  'GET /api/v1/events.gpkg': publicRead('/api/v1/events.gpkg?catalog=news'),
  'GET /api/v1/events.fgb': publicRead('/api/v1/events.fgb?catalog=news'),
  'GET /api/v1/events.parquet': publicRead('/api/v1/events.parquet?catalog=news'),
  'GET /api/v1/events.pmtiles': publicRead('/api/v1/events.pmtiles?datasets=fires'),
  'GET /api/v1/events': publicRead('/api/v1/events'),
  'GET /api/v1/events/bounds': publicRead('/api/v1/events/bounds'),
  'GET /api/v1/events/geo': publicRead(
    `/api/v1/events/geo?zoom=3&bounds=${encodeURIComponent('{"north":60,"south":40,"east":20,"west":0}')}`,
  ),
  'GET /api/v1/events/geo/stats': publicRead('/api/v1/events/geo/stats'),
  'GET /api/v1/events/stats': publicRead('/api/v1/events/stats?groupBy=catalog'),
  'GET /api/v1/events/temporal': publicRead('/api/v1/events/temporal'),
  'GET /api/v1/sources/stats': publicRead('/api/v1/sources/stats'),
  ...provenanceRows,
  // Public, and filtered by the read model's visibility: the fixture's events are the owner's, not
  // public, so the world tile is empty (204) for anonymous callers and strangers.
  'GET /api/v1/tiles/:z/:x/:y.mvt': {
    expect: [204, 204, 200, 200],
    rule: PUBLIC,
    request: get('/api/v1/tiles/0/0/0.mvt'),
  },
  // A last segment without `.mvt`: the tile parser's 400 naming y, for everyone (not in the document).
  'GET /api/v1/tiles/:z/:x/:y': {
    expect: [400, 400, 400, 400],
    rule: PUBLIC,
    request: get('/api/v1/tiles/0/0/0.png'),
  },
  'GET /api/v1/tiles.json': publicRead('/api/v1/tiles.json'),
  'GET /api/v1/datasets/:id/schema/infer': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule of the dataset (private here)',
    request: at((fx) => `/api/v1/datasets/${fx.dataset}/schema/infer`),
  },
  'GET /ogc': publicRead('/ogc'),
  'GET /ogc/conformance': publicRead('/ogc/conformance'),
  'GET /ogc/collections': publicRead('/ogc/collections'),
  'GET /ogc/collections/:collectionId': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule of the dataset (private here)',
    request: async (fx) => ({ url: `/ogc/collections/${await datasetSlug(fx)}` }),
  },
  'GET /ogc/collections/:collectionId/items': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule of the dataset (private here)',
    request: async (fx) => ({ url: `/ogc/collections/${await datasetSlug(fx)}/items` }),
  },
  'GET /ogc/collections/:collectionId/queryables': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule of the dataset (private here)',
    request: async (fx) => ({ url: `/ogc/collections/${await datasetSlug(fx)}/queryables` }),
  },
  'GET /ogc/collections/:collectionId/schema': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule of the dataset (private here)',
    request: async (fx) => ({ url: `/ogc/collections/${await datasetSlug(fx)}/schema` }),
  },
  'GET /ogc/collections/:collectionId/items/:featureId': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule of the dataset (private here)',
    request: async (fx) => ({ url: `/ogc/collections/${await datasetSlug(fx)}/items/${fx.event}` }),
  },
  'POST /api/webhooks/trigger/:token': {
    expect: [404, 404, 404, 404],
    rule: 'public: the token is the credential (unknown token here)',
    request: () => ({ url: `/api/webhooks/trigger/${'0'.repeat(64)}` }),
  },

  // Accounts.
  'POST /api/users/login': {
    expect: [401, 401, 401, 401],
    rule: 'public (wrong password here)',
    request: () => ({
      url: '/api/users/login',
      payload: { email: 'nobody@example.org', password: 'wrong-password' },
    }),
  },
  'POST /api/auth/register': {
    expect: [200, 200, 200, 200],
    rule: 'public (enumeration-safe)',
    request: () => ({
      url: '/api/auth/register',
      payload: { email: `new-${unique()}@example.org`, password: 'a long enough password 123' },
    }),
  },
  'POST /api/users/logout': {
    expect: [200, 200, 200, 200],
    rule: 'public: ends the session it is sent with, if any',
    destructive: true,
    request: async (fx, caller) =>
      caller === 'anonymous'
        ? { url: '/api/users/logout' }
        : { url: '/api/users/logout', token: await fx.login(fx.users[caller].email) },
  },
  'GET /api/users/me': {
    expect: [200, 200, 200, 200],
    rule: 'public: `{user: null}` when anonymous',
    request: get('/api/users/me'),
  },
  'POST /api/users/refresh-token': {
    expect: [401, 200, 200, 200],
    rule: USER,
    destructive: true,
    // A refresh ends the session it was sent with: a session of its own.
    request: async (fx, caller) =>
      caller === 'anonymous'
        ? { url: '/api/users/refresh-token' }
        : { url: '/api/users/refresh-token', token: await fx.login(fx.users[caller].email) },
  },
  'POST /api/users/change-password': {
    expect: [401, 400, 400, 400],
    rule: 'the caller themselves (invalid body here)',
    request: () => ({ url: '/api/users/change-password', payload: {} }),
  },
  'POST /api/users/change-email': {
    expect: [401, 400, 400, 400],
    rule: 'the caller themselves (invalid body here)',
    request: () => ({ url: '/api/users/change-email', payload: {} }),
  },
  'POST /api/users/delete-account': {
    expect: [401, 400, 400, 400],
    rule: 'the caller themselves (invalid body here)',
    request: () => ({ url: '/api/users/delete-account', payload: {} }),
  },
  'GET /api/account/deletion-summary': {
    expect: [401, 200, 200, 200],
    rule: USER,
    request: get('/api/account/deletion-summary'),
  },
  ...apiKeyRows,
  ...emailRows,
  'GET /api/quotas': { expect: [401, 200, 200, 200], rule: USER, request: get('/api/quotas') },
  'GET /api/feature-flags': {
    expect: [200, 200, 200, 200],
    rule: PUBLIC,
    request: get('/api/feature-flags'),
  },
  'PATCH /api/feature-flags': {
    expect: [401, 403, 403, 200],
    rule: ADMIN,
    request: () => ({ url: '/api/feature-flags', payload: { enableScrapers: true } }),
  },
  'GET /api/users': {
    expect: [401, 200, 200, 200],
    rule: 'logged-in users; each sees only themselves, admins all',
    request: get('/api/users'),
  },
  'GET /api/users/count': {
    expect: [401, 200, 200, 200],
    rule: 'logged-in users; counts what the list shows them (themselves, admins all)',
    request: get('/api/users/count'),
  },
  'POST /api/users': {
    expect: [401, 403, 403, 201],
    rule: ADMIN,
    request: () => ({
      url: '/api/users',
      payload: { email: `made-${unique()}@example.org`, password: 'a long enough password 123' },
    }),
  },
  'GET /api/users/:id': {
    expect: [401, 404, 200, 200],
    rule: 'the user themselves or an admin; 404 for others',
    request: at((fx) => `/api/users/${fx.users.owner.id}`),
  },
  'PATCH /api/users/:id': {
    expect: [401, 404, 200, 200],
    rule: 'the user themselves or an admin; 404 for others',
    request: body(
      (fx) => `/api/users/${fx.users.owner.id}`,
      () => ({}),
    ),
  },
  'DELETE /api/users/:id': {
    expect: [401, 404, 403, 200],
    rule: 'admins; 404 for others (the user themselves: 403, they use POST /api/users/delete-account)',
    destructive: true,
    request: async (fx, caller) => {
      const target = await fx.freshUser();
      return { url: `/api/users/${target.id}`, ...(caller === 'owner' ? { token: target.token } : {}) };
    },
  },

  // The catalog > dataset > event collections.
  'GET /api/catalogs': {
    expect: [200, 200, 200, 200],
    rule: 'public list of what the caller may read',
    request: get('/api/catalogs'),
  },
  'GET /api/catalogs/count': {
    expect: [200, 200, 200, 200],
    rule: 'public count of what the caller may read',
    request: get('/api/catalogs/count'),
  },
  'GET /api/catalogs/:id': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule (private here)',
    request: at((fx) => `/api/catalogs/${fx.catalog}`),
  },
  'POST /api/catalogs': {
    expect: [401, 201, 201, 201],
    keys: [403, 201, 403],
    rule: USER,
    request: () => {
      const slug = `c-${unique()}`;
      return { url: '/api/catalogs', payload: { slug, title: slug } };
    },
  },
  'PATCH /api/catalogs/:id': {
    expect: [401, 404, 200, 200],
    rule: OWNER,
    request: body(
      (fx) => `/api/catalogs/${fx.catalog}`,
      () => ({ description: 'changed' }),
    ),
  },
  'DELETE /api/catalogs/:id': {
    expect: [401, 404, 200, 200],
    rule: OWNER,
    destructive: true,
    request: async (fx) => ({ url: `/api/catalogs/${await fx.freshCatalog()}` }),
  },
  'GET /api/datasets': {
    expect: [200, 200, 200, 200],
    rule: 'public list of what the caller may read',
    request: get('/api/datasets'),
  },
  'GET /api/datasets/count': {
    expect: [200, 200, 200, 200],
    rule: 'public count of what the caller may read',
    request: get('/api/datasets/count'),
  },
  'GET /api/datasets/:id': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule (private here)',
    request: at((fx) => `/api/datasets/${fx.dataset}`),
  },
  'POST /api/datasets': {
    expect: [401, 400, 201, 201],
    rule: 'write access to the catalog (400 when it cannot be seen, 403 when read-only)',
    request: body(
      () => '/api/datasets',
      (fx) => ({ slug: `d-${unique()}`, title: 'Data', catalog: fx.catalog }),
    ),
  },
  'PATCH /api/datasets/:id': {
    expect: [401, 404, 200, 200],
    rule: OWNER,
    request: body(
      (fx) => `/api/datasets/${fx.dataset}`,
      () => ({ description: 'changed' }),
    ),
  },
  'DELETE /api/datasets/:id': {
    expect: [401, 404, 200, 200],
    rule: OWNER,
    destructive: true,
    request: async (fx) => ({ url: `/api/datasets/${await fx.freshDataset()}` }),
  },
  'GET /api/events': {
    expect: [200, 200, 200, 200],
    rule: 'public list of what the caller may read',
    request: get('/api/events'),
  },
  'GET /api/events/count': {
    expect: [200, 200, 200, 200],
    rule: 'public count of what the caller may read',
    request: get('/api/events/count'),
  },
  'GET /api/events/:id': {
    expect: [404, 404, 200, 200],
    rule: 'the read rule (private here)',
    request: at((fx) => `/api/events/${fx.event}`),
  },
  'POST /api/events': {
    expect: [401, 400, 201, 201],
    rule: 'write access to the dataset (400 when it cannot be seen, 403 when read-only)',
    request: body(
      () => '/api/events',
      (fx) => ({
        dataset: fx.dataset,
        uniqueId: unique(),
        title: 'new',
        eventTimestamp: '2025-01-01T00:00:00.000Z',
      }),
    ),
  },
  'PATCH /api/events/:id': {
    expect: [401, 404, 200, 200],
    rule: OWNER,
    request: body(
      (fx) => `/api/events/${fx.event}`,
      () => ({ title: 'changed' }),
    ),
  },
  'DELETE /api/events/:id': {
    expect: [401, 404, 200, 200],
    rule: OWNER,
    destructive: true,
    request: async (fx) => ({ url: `/api/events/${await fx.freshEvent()}` }),
  },

  // Imports: the ingest- and import-named variants.
  'POST /api/ingest-files': {
    expect: [401, 404, 201, 201],
    rule: 'write access to the catalog (404 when it cannot be seen, 403 when read-only)',
    request: (fx) => {
      const upload = fx.upload();
      return { url: '/api/ingest-files', payload: upload.payload, headers: upload.headers };
    },
  },
  'POST /api/ingest/preview': {
    expect: [401, 200, 200, 200],
    rule: USER,
    request: (fx) => {
      const upload = fx.upload();
      return { url: '/api/ingest/preview', payload: upload.payload, headers: upload.headers };
    },
  },
  'POST /api/geocoding/test': {
    expect: [401, 403, 403, 200],
    rule: ADMIN,
    request: () => ({ url: '/api/geocoding/test', payload: { address: 'Cologne, Germany' } }),
  },
  'GET /api/ingest-files/:id': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: at((fx) => `/api/ingest-files/${fx.file}`),
  },
  'GET /api/ingest/:ingestId/progress': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: at((fx) => `/api/ingest/${fx.file}/progress`),
  },
  'GET /api/import/:importId/progress': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: at((fx) => `/api/import/${fx.file}/progress`),
  },
  'GET /api/ingest-jobs/failed/recommendations': {
    expect: [401, 200, 200, 200],
    rule: "logged-in users; lists only the caller's imports (admins: all)",
    request: get('/api/ingest-jobs/failed/recommendations'),
  },
  'GET /api/import-jobs/failed/recommendations': {
    expect: [401, 200, 200, 200],
    rule: "logged-in users; lists only the caller's imports (admins: all)",
    request: get('/api/import-jobs/failed/recommendations'),
  },
  'GET /api/ingest-jobs/:id': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: at((fx) => `/api/ingest-jobs/${fx.job}`),
  },
  'GET /api/import-jobs/:id': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: at((fx) => `/api/import-jobs/${fx.job}`),
  },
  'PATCH /api/ingest-jobs/:id': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: body(
      (fx) => `/api/ingest-jobs/${fx.job}`,
      () => ({}),
    ),
  },
  'PATCH /api/import-jobs/:id': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: body(
      (fx) => `/api/import-jobs/${fx.job}`,
      () => ({}),
    ),
  },
  'POST /api/ingest-jobs/:id/retry': {
    expect: [401, 404, 400, 400],
    rule: `${IMPORT} (400 here: the job has not failed)`,
    request: at((fx) => `/api/ingest-jobs/${fx.job}/retry`),
  },
  'POST /api/import-jobs/:id/retry': {
    expect: [401, 404, 400, 400],
    rule: `${IMPORT} (400 here: the job has not failed)`,
    request: at((fx) => `/api/import-jobs/${fx.job}/retry`),
  },
  'POST /api/ingest-jobs/:id/reset': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: body(
      (fx) => `/api/ingest-jobs/${fx.job}/reset`,
      () => ({ stage: 'analyze-duplicates' }),
    ),
  },
  'POST /api/import-jobs/:id/reset': {
    expect: [401, 404, 200, 200],
    rule: IMPORT,
    request: body(
      (fx) => `/api/import-jobs/${fx.job}/reset`,
      () => ({ stage: 'ANALYZE_DUPLICATES' }),
    ),
  },

  // Scheduled imports (both names).
  ...scheduleRows('/api/scheduled-ingests'),
  ...scheduleRows('/api/scheduled-imports'),
  // Import lists, the wizard's routes and issue 21's other endpoint families.
  ...importListRows(),

  // Scrapers.
  ...scraperRows(),
  // Saved views, their short links, embeds and account page.
  ...viewRows(),
  // Subscriptions and their account page.
  ...subscriptionRows(),

  // HTML pages: the admin dashboard and the account's scraper pages (anonymous: to the login page).
  ...htmlRows(),
};

import {
  ADMIN,
  at,
  body,
  get,
  IMPORT,
  type MatrixRow,
  publicRead,
  SCHEDULE,
  USER,
} from './route-authorization-helpers.ts';

// Rows of the route authorization matrix for the import lists, the wizard's routes and the other
// endpoint families of issue 21 (data exports, legal notices, newsletter, preview, admin views).

const LISTS = "logged-in users; lists only the caller's imports (admins: all)";

export function importListRows(): Record<string, MatrixRow> {
  const rows: Record<string, MatrixRow> = {
    'GET /api/ingest-files': { expect: [401, 200, 200, 200], rule: LISTS, request: get('/api/ingest-files') },
    'GET /api/catalogs/with-datasets': {
      expect: [401, 200, 200, 200],
      rule: "logged-in users; the caller's own catalogs (admins: all)",
      request: get('/api/catalogs/with-datasets'),
    },
    'POST /api/ingest/configure': {
      expect: [401, 404, 200, 200],
      rule: `${IMPORT} (the upload's)`,
      request: body(
        () => '/api/ingest/configure',
        (fx) => ({ draft: fx.draft, settings: { geocoding: false } }),
      ),
    },
    'POST /api/ingest/validate-preview': {
      expect: [401, 404, 200, 200],
      rule: `${IMPORT} (the upload's)`,
      request: body(
        () => '/api/ingest/validate-preview',
        (fx) => ({ draft: fx.draft }),
      ),
    },
    'POST /api/ingest/preview-url': {
      expect: [401, 400, 400, 400],
      rule: `${USER} (400 here: nothing listens at the URL)`,
      request: () => ({ url: '/api/ingest/preview-url', payload: { url: 'http://127.0.0.1:9/feed.csv' } }),
    },
    'GET /api/ingest-jobs/:id/geocoding': {
      expect: [401, 404, 200, 200],
      rule: IMPORT,
      request: at((fx) => `/api/ingest-jobs/${fx.job}/geocoding`),
    },
    'GET /api/ingest-jobs/:id/geocoding/unplaced.csv': {
      expect: [401, 404, 200, 200],
      rule: IMPORT,
      request: at((fx) => `/api/ingest-jobs/${fx.job}/geocoding/unplaced.csv`),
    },
    'POST /api/ingest-jobs/:id/geocoding/place': {
      expect: [401, 404, 409, 409],
      rule: `${IMPORT} (409 here: the job looked up no addresses)`,
      request: body(
        (fx) => `/api/ingest-jobs/${fx.job}/geocoding/place`,
        () => ({ latitude: 'lat', longitude: 'lon' }),
      ),
    },
    'GET /api/admin/schedule-service': {
      expect: [401, 403, 403, 200],
      rule: ADMIN,
      request: get('/api/admin/schedule-service'),
    },
    'POST /api/admin/schedule-service': {
      expect: [401, 403, 403, 202],
      rule: ADMIN,
      request: get('/api/admin/schedule-service'),
    },
    'GET /api/admin/jobs': { expect: [401, 403, 403, 200], rule: ADMIN, request: get('/api/admin/jobs') },
    'POST /api/admin/jobs/run': {
      expect: [401, 403, 403, 200],
      rule: `${ADMIN}; not in production`,
      request: get('/api/admin/jobs/run'),
    },
    'GET /api/legal-notices': publicRead('/api/legal-notices'),
    'GET /scraper-helper.tgz': publicRead('/scraper-helper.tgz'),
    'GET /scraper-helper-python/:wheel': publicRead(
      '/scraper-helper-python/chronomap_scraper-0.1.0-py3-none-any.whl',
    ),
    'PATCH /api/legal-notices': {
      expect: [401, 403, 403, 200],
      rule: ADMIN,
      request: () => ({ url: '/api/legal-notices', payload: { registrationDisclaimer: 'Be kind.' } }),
    },
    'GET /api/newsletter/settings': {
      expect: [401, 403, 403, 200],
      rule: ADMIN,
      request: get('/api/newsletter/settings'),
    },
    'PATCH /api/newsletter/settings': {
      expect: [401, 403, 403, 200],
      rule: ADMIN,
      request: () => ({ url: '/api/newsletter/settings', payload: { serviceUrl: null } }),
    },
    'POST /api/newsletter/subscribe': {
      expect: [404, 404, 404, 404],
      rule: 'public, rate limited (404 here: no newsletter service configured)',
      request: () => ({ url: '/api/newsletter/subscribe', payload: { email: 'reader@example.org' } }),
    },
    'GET /api/preview': {
      expect: [401, 403, 403, 302],
      rule: ADMIN,
      request: at((fx) => `/api/preview?dataset=${fx.dataset}`),
    },
    'POST /api/data-exports/request': {
      expect: [401, 202, 202, 202],
      rule: USER,
      request: () => ({ url: '/api/data-exports/request' }),
    },
    'GET /api/data-exports/:id': {
      expect: [401, 404, 200, 404],
      rule: 'its owner only (admins too get 404: personal data)',
      request: at((fx) => `/api/data-exports/${fx.dataExport}`),
    },
    'GET /api/data-exports/:id/download': {
      expect: [401, 404, 409, 404],
      rule: 'its owner only (409 here: the export failed)',
      request: at((fx) => `/api/data-exports/${fx.dataExport}/download`),
    },
  };
  for (const base of ['/api/scheduled-ingests', '/api/scheduled-imports']) {
    rows[`GET ${base}`] = { expect: [401, 200, 200, 200], rule: LISTS, request: get(base) };
    rows[`GET ${base}/:id/runs`] = {
      expect: [401, 404, 200, 200],
      rule: SCHEDULE,
      request: at((fx) => `${base}/${fx.schedule}/runs`),
    };
    rows[`DELETE ${base}/:id`] = {
      expect: [401, 404, 200, 200],
      rule: SCHEDULE,
      destructive: true,
      request: async (fx) => ({ url: `${base}/${await fx.freshSchedule()}` }),
    };
  }
  return rows;
}

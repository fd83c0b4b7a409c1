import { at, body, get, OWNER, unique, type MatrixRow } from './route-authorization-helpers.ts';

// The scraper routes' rows of the route authorization matrix (route-authorization-table.ts): repos,
// scrapers, runs and the webhook.

export function scraperRows(): Record<string, MatrixRow> {
  return {
    'GET /api/scraper-repos': {
      expect: [401, 200, 200, 200],
      rule: 'scraper access (level 3+); lists only own (admins: all)',
      request: get('/api/scraper-repos'),
    },
    'GET /api/scraper-repos/:id': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: at((fx) => `/api/scraper-repos/${fx.repo}`),
    },
    'POST /api/scraper-repos': {
      expect: [401, 201, 201, 201],
      rule: 'scraper access (level 3+)',
      request: () => {
        const slug = `repo-${unique()}`;
        return {
          url: '/api/scraper-repos',
          payload: { name: slug, slug, sourceType: 'upload', code: { 'scrapers.yml': 'scrapers: []\n' } },
        };
      },
    },
    'PATCH /api/scraper-repos/:id': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: body(
        (fx) => `/api/scraper-repos/${fx.repo}`,
        () => ({ name: `Renamed ${unique()}` }),
      ),
    },
    'DELETE /api/scraper-repos/:id': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      destructive: true,
      request: async (fx) => ({ url: `/api/scraper-repos/${await fx.freshRepo()}` }),
    },
    'POST /api/scraper-repos/:id/sync': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: at((fx) => `/api/scraper-repos/${fx.repo}/sync`),
    },
    'GET /api/scrapers': {
      expect: [401, 200, 200, 200],
      rule: 'scraper access (level 3+); lists only own (admins: all)',
      request: get('/api/scrapers'),
    },
    'GET /api/scrapers/:id': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: at((fx) => `/api/scrapers/${fx.scraper}`),
    },
    'POST /api/scrapers': {
      expect: [401, 403, 403, 403],
      rule: 'nobody: scrapers come from the manifest',
      request: () => ({ url: '/api/scrapers', payload: {} }),
    },
    'PATCH /api/scrapers/:id': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: body(
        (fx) => `/api/scrapers/${fx.scraper}`,
        () => ({ autoImport: false }),
      ),
    },
    'DELETE /api/scrapers/:id': {
      expect: [401, 403, 403, 403],
      rule: 'nobody: scrapers come from the manifest',
      request: at((fx) => `/api/scrapers/${fx.scraper}`),
    },
    'POST /api/scrapers/:id/run': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: at((fx) => `/api/scrapers/${fx.scraper}/run`),
    },
    'GET /api/scraper-runs': {
      expect: [401, 200, 200, 200],
      rule: 'scraper access (level 3+); lists only own (admins: all)',
      request: get('/api/scraper-runs'),
    },
    'GET /api/scraper-runs/:id': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: at((fx) => `/api/scraper-runs/${fx.run}`),
    },
    'POST /api/scraper-runs': {
      expect: [401, 403, 403, 403],
      rule: 'nobody: runs are queued by POST /api/scrapers/{id}/run',
      request: () => ({ url: '/api/scraper-runs', payload: {} }),
    },
    'POST /api/scraper-runs/:id/cancel': {
      expect: [401, 404, 200, 200],
      rule: OWNER,
      request: at((fx) => `/api/scraper-runs/${fx.run}/cancel`),
    },
  };
}

import type { MatrixFixture } from './route-authorization-fixture.ts';
import { at, body, CSRF, get, type MatrixRow, SCHEDULE, unique } from './route-authorization-helpers.ts';

// Rows of the route authorization matrix for the scheduled imports (both names) and the HTML pages
// (the admin dashboard and the account's scraper pages).

export function scheduleRows(base: string): Record<string, MatrixRow> {
  return {
    [`POST ${base}`]: {
      expect: [401, 404, 201, 201],
      rule: 'write access to the catalog (404 when it cannot be seen, 403 when read-only)',
      request: body(
        () => base,
        (fx) => ({ name: 'Feed', url: 'https://example.org/feed.csv', catalog: fx.catalog }),
      ),
    },
    [`GET ${base}/:id`]: {
      expect: [401, 404, 200, 200],
      rule: SCHEDULE,
      request: at((fx) => `${base}/${fx.schedule}`),
    },
    [`PATCH ${base}/:id`]: {
      expect: [401, 404, 200, 200],
      rule: SCHEDULE,
      request: body(
        (fx) => `${base}/${fx.schedule}`,
        () => ({ name: `Feed ${unique()}` }),
      ),
    },
    [`POST ${base}/:id/trigger`]: {
      expect: [401, 404, 202, 202],
      rule: SCHEDULE,
      request: at((fx) => `${base}/${fx.schedule}/trigger`),
    },
  };
}

export function htmlRows(): Record<string, MatrixRow> {
  const page = (url: string, expect: MatrixRow['expect'], rule: string): MatrixRow => ({
    expect,
    rule,
    request: get(url),
  });
  const form = (url: string | ((fx: MatrixFixture) => string), anonymous = 303): MatrixRow => ({
    expect: [anonymous, 403, 403, 403],
    rule: CSRF,
    request: (fx) => ({ url: typeof url === 'string' ? url : url(fx), payload: {} }),
  });
  return {
    'GET /dashboard': page('/dashboard', [303, 403, 403, 200], 'admin pages'),
    'GET /dashboard/login': page(
      '/dashboard/login',
      [200, 200, 200, 303],
      'public (admins are sent on to the dashboard)',
    ),
    'POST /dashboard/login': form('/dashboard/login', 403),
    'POST /dashboard/logout': form('/dashboard/logout', 403),
    'GET /dashboard/catalogs': page('/dashboard/catalogs', [303, 403, 403, 200], 'admin pages'),
    'POST /dashboard/catalogs': form('/dashboard/catalogs'),
    'GET /dashboard/catalogs/:id': {
      expect: [303, 403, 403, 200],
      rule: 'admin pages',
      request: at((fx) => `/dashboard/catalogs/${fx.catalog}`),
    },
    'POST /dashboard/catalogs/:id': form((fx) => `/dashboard/catalogs/${fx.catalog}`),
    'POST /dashboard/catalogs/:id/datasets': form((fx) => `/dashboard/catalogs/${fx.catalog}/datasets`),
    'POST /dashboard/catalogs/:id/delete': form((fx) => `/dashboard/catalogs/${fx.catalog}/delete`),
    'GET /dashboard/datasets/:id': {
      expect: [303, 403, 403, 200],
      rule: 'admin pages',
      request: at((fx) => `/dashboard/datasets/${fx.dataset}`),
    },
    'POST /dashboard/datasets/:id': form((fx) => `/dashboard/datasets/${fx.dataset}`),
    'POST /dashboard/datasets/:id/delete': form((fx) => `/dashboard/datasets/${fx.dataset}/delete`),
    'POST /dashboard/datasets/:id/visibility': form((fx) => `/dashboard/datasets/${fx.dataset}/visibility`),
    'GET /dashboard/ingest': page('/dashboard/ingest', [303, 403, 403, 200], 'admin pages'),
    'GET /dashboard/settings': page('/dashboard/settings', [303, 403, 403, 200], 'admin pages'),
    'POST /dashboard/settings': form('/dashboard/settings'),
    'GET /dashboard/users': page('/dashboard/users', [303, 403, 403, 200], 'admin pages'),
    'POST /dashboard/users/:id': form((fx) => `/dashboard/users/${fx.users.owner.id}`),
    'GET /account/login': page(
      '/account/login',
      [200, 303, 303, 303],
      'public (logged-in callers are sent on to their scrapers)',
    ),
    'POST /account/login': form('/account/login', 403),
    'POST /account/logout': form('/account/logout', 403),
    'GET /account/register': page(
      '/account/register',
      [200, 303, 303, 303],
      'public (logged-in callers are sent on to the import wizard)',
    ),
    'POST /account/register': form('/account/register', 403),
    'GET /account': page(
      '/account',
      [303, 200, 200, 200],
      "logged-in users; only the caller's own data export",
    ),
    'POST /account/data-export': form('/account/data-export'),
    'GET /account/api-keys': page(
      '/account/api-keys',
      [303, 200, 200, 200],
      "logged-in users; only the caller's own keys",
    ),
    'POST /account/api-keys': form('/account/api-keys'),
    'GET /account/datasets/:id/settings': {
      expect: [303, 404, 200, 200],
      rule: 'write access to the dataset (canWriteDataset; anyone else: the 404 page)',
      request: at((fx) => `/account/datasets/${fx.dataset}/settings`),
    },
    'POST /account/datasets/:id/settings': form((fx) => `/account/datasets/${fx.dataset}/settings`),
    'POST /account/api-keys/:id/revoke': form('/account/api-keys/1/revoke'),
    'GET /account/scrapers': page('/account/scrapers', [303, 200, 200, 200], 'scraper access (level 3+)'),
    'POST /account/scrapers/repos/:id/delete': form((fx) => `/account/scrapers/repos/${fx.repo}/delete`),
    'POST /account/scrapers/repos/:id/sync': form((fx) => `/account/scrapers/repos/${fx.repo}/sync`),
    'POST /account/scrapers/scrapers/:id/run': form((fx) => `/account/scrapers/scrapers/${fx.scraper}/run`),
    ...scraperPageRows(page, form),
    ...importPageRows(page, form),
  };
}

/** The import pages: any logged-in user sees their own imports (admins: all); others' records are 404. */
function importPageRows(
  page: (url: string, expect: MatrixRow['expect'], rule: string) => MatrixRow,
  form: (url: string | ((fx: MatrixFixture) => string), anonymous?: number) => MatrixRow,
): Record<string, MatrixRow> {
  const own = "logged-in users; only the caller's imports (admins: all)";
  const job = (action: string) => form((fx) => `/account/imports/jobs/${fx.job}/${action}`);
  const schedule = (action: string) => form((fx) => `/account/scheduled-imports/${fx.schedule}/${action}`);
  return {
    'GET /account/imports/new': page('/account/imports/new', [303, 200, 200, 200], 'any logged-in user'),
    'GET /account/imports': page('/account/imports', [303, 200, 200, 200], own),
    'POST /account/imports/jobs/:id/approve': job('approve'),
    'POST /account/imports/jobs/:id/retry': job('retry'),
    'POST /account/imports/jobs/:id/reset': job('reset'),
    'POST /account/imports/jobs/:id/configure': job('configure'),
    'GET /account/imports/jobs/:id/geocoding': {
      expect: [303, 404, 200, 200],
      rule: own,
      request: at((fx) => `/account/imports/jobs/${fx.job}/geocoding`),
    },
    'POST /account/imports/jobs/:id/geocoding/place': job('geocoding/place'),
    'POST /dashboard/ingest/jobs/:id/requeue': form((fx) => `/dashboard/ingest/jobs/${fx.job}/requeue`),
    'GET /account/scheduled-imports': page('/account/scheduled-imports', [303, 200, 200, 200], own),
    'POST /account/scheduled-imports': form('/account/scheduled-imports'),
    'POST /account/scheduled-imports/:id/edit': schedule('edit'),
    'POST /account/scheduled-imports/:id/enable': schedule('enable'),
    'POST /account/scheduled-imports/:id/disable': schedule('disable'),
    'POST /account/scheduled-imports/:id/trigger': schedule('trigger'),
    'POST /account/scheduled-imports/:id/delete': schedule('delete'),
  };
}

/** The scraper pages of issue 29 §1: a repo, a scraper and a run are their owner's (admins: all); others get 404. */
function scraperPageRows(
  page: (url: string, expect: MatrixRow['expect'], rule: string) => MatrixRow,
  form: (url: string | ((fx: MatrixFixture) => string), anonymous?: number) => MatrixRow,
): Record<string, MatrixRow> {
  const own = 'scraper access; only the repo owner (admins: all), 404 for others';
  const mine = (build: (fx: MatrixFixture) => string): MatrixRow => ({
    expect: [303, 404, 200, 200],
    rule: own,
    request: at(build),
  });
  const repo = (action: string) => form((fx) => `/account/scrapers/repos/${fx.repo}/${action}`);
  const scraper = (action: string) => form((fx) => `/account/scrapers/scrapers/${fx.scraper}/${action}`);
  return {
    'GET /account/scrapers/new': page(
      '/account/scrapers/new',
      [303, 200, 200, 200],
      'scraper access (level 3+)',
    ),
    'POST /account/scrapers/repos': form('/account/scrapers/repos'),
    'GET /account/scrapers/repos/:id': mine((fx) => `/account/scrapers/repos/${fx.repo}`),
    'POST /account/scrapers/repos/:id/edit': repo('edit'),
    'POST /account/scrapers/repos/:id/files': repo('files'),
    'POST /account/scrapers/repos/:id/files/delete': repo('files/delete'),
    'POST /account/scrapers/repos/:id/upload': repo('upload'),
    'GET /account/scrapers/scrapers/:id': mine((fx) => `/account/scrapers/scrapers/${fx.scraper}`),
    'POST /account/scrapers/scrapers/:id/settings': scraper('settings'),
    'POST /account/scrapers/scrapers/:id/env': scraper('env'),
    'POST /account/scrapers/scrapers/:id/env/remove': scraper('env/remove'),
    'POST /account/scrapers/scrapers/:id/webhook': scraper('webhook'),
    'GET /account/scrapers/runs/:id': mine((fx) => `/account/scrapers/runs/${fx.run}`),
    'POST /account/scrapers/runs/:id/stop': form((fx) => `/account/scrapers/runs/${fx.run}/stop`),
  };
}

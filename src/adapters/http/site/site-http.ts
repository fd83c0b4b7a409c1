import type { FastifyInstance } from 'fastify';
import type { AdminJobsDeps } from '../../../application/site/admin-jobs.ts';
import type { HealthDeps } from '../../../application/site/check-health.ts';
import type { SavedViewDeps } from '../../../application/site/saved-views.ts';
import type { SiteNoticeDeps } from '../../../application/site/site-notices.ts';
import type { FeatureFlagStore } from '../../../ports/site/feature-flag-store.ts';
import { projectRoot } from '../../config/environment.ts';
import { type ExploreOptions, exploreRoutes } from '../../web/explore.ts';
import { scraperHelperRoutes } from '../../web/scraper-helper.ts';
import type { HttpFeature } from '../http-feature.ts';
import { adminJobRoutes } from './admin-job-routes.ts';
import { featureFlagRoutes } from './feature-flag-routes.ts';
import { featureFlagSchemas } from './feature-flag-schemas.ts';
import { healthRoutes } from './health-routes.ts';
import { siteNoticeRoutes } from './site-notice-routes.ts';
import { viewRoutes } from './view-routes.ts';

// The site's own routes, registered first: `/`, the files it hands out and its health. The admin
// views of the jobs with the legal notices, and the feature flags, are features of their own that
// the composition root places among the other features' routes (src/compose.ts keeps the OpenAPI
// document's order).

type SiteHttpDeps = {
  version: string;
  health: HealthDeps;
  /** Saved views: their API, short links and embeds, and the account page (pages). */
  views: SavedViewDeps;
  /** The account page of saved views (src/adapters/pages/site/saved-views-page.ts). */
  pages?: (app: FastifyInstance) => Promise<void>;
  /** The Explore page at `/` (without it `/` answers the JSON index only). */
  explore?: Omit<ExploreOptions, 'version' | 'index'>;
};

export function siteHttp(deps: SiteHttpDeps): HttpFeature {
  return {
    routes: async (app) => {
      const index = {
        name: 'chronomap',
        version: deps.version,
        explore: '/',
        health: '/api/health',
        openapi: '/api/openapi.json',
        docs: '/api/docs',
      };
      // `/` is the Explore page for browsers; a client asking for JSON still gets this index.
      if (deps.explore)
        await exploreRoutes(app, { ...deps.explore, version: deps.version, index, views: deps.views });
      else app.get('/', { schema: { hide: true } }, async () => index);
      // The scraper helper package for `npx` on a machine without a Chronomap checkout
      // (docs/scrapers.md): a file the site hands out, first in the OpenAPI document.
      await app.register(scraperHelperRoutes, { root: deps.explore?.root ?? projectRoot });
      await app.register(healthRoutes, { health: deps.health });
      await app.register(viewRoutes, { views: deps.views });
    },
    ...(deps.pages ? { pages: deps.pages } : {}),
  };
}

/** The admin views of the schedule manager and the job queues; legal notices, newsletter, preview. */
export function siteAdminHttp(deps: { adminJobs: AdminJobsDeps; notices: SiteNoticeDeps }): HttpFeature {
  return {
    routes: async (app) => {
      await app.register(adminJobRoutes, { adminJobs: deps.adminJobs });
      await app.register(siteNoticeRoutes, { notices: deps.notices });
    },
  };
}

/** GET/PATCH /api/feature-flags and the schema of the flags. */
export function featureFlagsHttp(deps: { flags: FeatureFlagStore }): HttpFeature {
  return {
    hooks: async (app) => {
      for (const schema of featureFlagSchemas) app.addSchema(schema);
    },
    routes: async (app) => {
      await app.register(featureFlagRoutes, { flags: deps.flags });
    },
  };
}

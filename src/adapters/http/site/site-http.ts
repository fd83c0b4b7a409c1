import type { HealthDeps } from '../../../application/site/check-health.ts';
import { projectRoot } from '../../config/environment.ts';
import { type ExploreOptions, exploreRoutes } from '../../web/explore.ts';
import { scraperHelperRoutes } from '../../web/scraper-helper.ts';
import type { HttpFeature } from '../http-feature.ts';
import { healthRoutes } from './health-routes.ts';

// The site's own routes, registered first: `/`, the files it hands out and its health.

type SiteHttpDeps = {
  version: string;
  health: HealthDeps;
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
      if (deps.explore) await exploreRoutes(app, { ...deps.explore, version: deps.version, index });
      else app.get('/', { schema: { hide: true } }, async () => index);
      // The scraper helper package for `npx` on a machine without a Chronomap checkout
      // (docs/scrapers.md): a file the site hands out, first in the OpenAPI document.
      await app.register(scraperHelperRoutes, { root: deps.explore?.root ?? projectRoot });
      await app.register(healthRoutes, { health: deps.health });
    },
  };
}

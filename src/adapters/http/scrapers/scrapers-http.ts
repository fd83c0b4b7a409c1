import type { ScraperCollectionDeps } from '../../../application/scrapers/scraper-collections.ts';
import type { HttpFeature } from '../http-feature.ts';
import { scraperCollectionRoutes } from './scraper-collection-routes.ts';
import { scraperCollectionSchemas } from './scraper-collection-schemas.ts';
import type { ScraperUseCases } from '../../../application/scrapers/scraper-triggers.ts';
import { type Authenticate, scraperRoutes } from './scraper-routes.ts';

// The scraper routes: the scraper-repos, scrapers and scraper-runs collections, then the triggers.

type ScrapersHttpDeps = {
  /** Absent in a process built without the scraper subsystem: the trigger routes answer 503. */
  triggers: ScraperUseCases | undefined;
  /** The collections; they need the accounts hooks (accountsHttp), so only an app with them has them. */
  collections?: ScraperCollectionDeps;
  /** Who is calling for the trigger routes; by default the accounts hooks' request.viewer. Tests inject their own. */
  authenticate?: Authenticate;
};

export function scrapersHttp(deps: ScrapersHttpDeps): HttpFeature {
  return {
    routes: async (app) => {
      if (deps.collections) {
        for (const schema of scraperCollectionSchemas) app.addSchema(schema);
        await app.register(scraperCollectionRoutes, deps.collections);
      }
      await app.register(scraperRoutes, {
        scrapers: deps.triggers,
        ...(deps.authenticate ? { authenticate: deps.authenticate } : {}),
      });
    },
  };
}

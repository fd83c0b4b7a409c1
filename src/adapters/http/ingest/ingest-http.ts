import type { HttpFeature } from '../http-feature.ts';
import type { ScraperUseCases } from '../scrapers/scraper-routes.ts';
import { geocodingOutcomeRoutes } from './geocoding-outcome-routes.ts';
import { geocodingRoutes } from './geocoding-routes.ts';
import { type IngestHttpDeps, ingestRoutes } from './ingest-file-routes.ts';
import { ingestJobRoutes } from './ingest-job-routes.ts';
import { type ImportsApiDeps, importsApiRoutes } from './imports-api.ts';
import { scheduledIngestRoutes } from './scheduled-ingest-routes.ts';

// The ingestion pipeline's routes: uploads, jobs, the geocoder test, a job's rows not placed, scheduled imports with the
// shared webhook endpoint, then the imports API (lists, wizard, and the site's and accounts' routes
// registered with it: admin jobs, notices, data exports).

type IngestHttpFeatureDeps = {
  ingest: IngestHttpDeps;
  /** Import lists, the wizard's routes, data exports, legal notices and the admin job views. */
  imports?: ImportsApiDeps;
  /** The scraper half of the shared webhook endpoint (scheduled-ingest-routes.ts). */
  triggerScraperWebhook?: ScraperUseCases['triggerWebhook'];
};

export function ingestHttp(deps: IngestHttpFeatureDeps): HttpFeature {
  const { ingest, imports, triggerScraperWebhook } = deps;
  return {
    routes: async (app) => {
      await app.register(ingestRoutes, { ingest });
      await app.register(ingestJobRoutes, { ingest });
      await app.register(geocodingRoutes, { geocoder: ingest.geocoder ?? null });
      await app.register(geocodingOutcomeRoutes, { ingest });
      await app.register(scheduledIngestRoutes, {
        ingest,
        ...(triggerScraperWebhook ? { triggerScraperWebhook } : {}),
      });
      if (imports) await app.register(importsApiRoutes, { ingest, imports });
    },
  };
}

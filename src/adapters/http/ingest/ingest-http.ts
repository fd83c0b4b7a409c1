import type { UrlPreviewDeps } from '../../../application/ingest/preview-url.ts';
import type { ScraperUseCases } from '../../../application/scrapers/scraper-triggers.ts';
import type { ImportListings } from '../../../ports/ingest/import-listings.ts';
import type { HttpFeature } from '../http-feature.ts';
import { geocodingOutcomeRoutes } from './geocoding-outcome-routes.ts';
import { geocodingRoutes } from './geocoding-routes.ts';
import { importListRoutes } from './import-list-routes.ts';
import { type IngestHttpDeps, ingestRoutes } from './ingest-file-routes.ts';
import { ingestJobRoutes } from './ingest-job-routes.ts';
import { scheduledIngestRoutes } from './scheduled-ingest-routes.ts';
import { ingestWizardRoutes } from './wizard-routes.ts';

// The ingestion pipeline's routes: uploads, jobs, the geocoder test, a job's rows not placed,
// scheduled imports with the shared webhook endpoint, the import lists; and, as a feature of its
// own that the composition root places after the site's and the accounts' routes of the same API
// (src/compose.ts keeps the OpenAPI document's order), the import wizard's configure/validate steps.

type IngestHttpFeatureDeps = {
  ingest: IngestHttpDeps;
  /** My imports, the scheduled imports with their runs, the wizard's catalogs. */
  listings?: ImportListings;
  /** The scraper half of the shared webhook endpoint (scheduled-ingest-routes.ts). */
  triggerScraperWebhook?: ScraperUseCases['triggerWebhook'];
};

export function ingestHttp(deps: IngestHttpFeatureDeps): HttpFeature {
  const { ingest, listings, triggerScraperWebhook } = deps;
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
      if (listings) await app.register(importListRoutes, { ingest, listings });
    },
  };
}

/** The import wizard's steps after the upload (configure, validate, preview a URL). */
export function ingestWizardHttp(deps: { ingest: IngestHttpDeps; urlPreview: UrlPreviewDeps }): HttpFeature {
  const { wizard } = deps.ingest;
  return {
    routes: async (app) => {
      if (wizard) await app.register(ingestWizardRoutes, { wizard, urlPreview: deps.urlPreview });
    },
  };
}

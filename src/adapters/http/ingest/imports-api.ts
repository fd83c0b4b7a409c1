import type { FastifyPluginAsync } from 'fastify';
import type { ImportListings } from '../../../ports/ingest/import-listings.ts';
import type { IngestHttpDeps } from './ingest-file-routes.ts';
import { importListRoutes } from './import-list-routes.ts';
import { ingestWizardRoutes } from './wizard-routes.ts';
import { adminJobRoutes } from '../site/admin-job-routes.ts';
import { siteNoticeRoutes } from '../site/site-notice-routes.ts';
import { dataExportRoutes } from '../accounts/data-export-routes.ts';
import type { DataExportDeps } from '../../../application/accounts/export-own-data.ts';
import type { SiteNoticeDeps } from '../../../application/site/site-notices.ts';
import type { AdminJobsDeps } from '../../../application/site/admin-jobs.ts';
import type { UrlPreviewDeps } from '../../../application/ingest/preview-url.ts';

// The routes of issue 21's API half, registered together: the import lists (my imports, scheduled
// imports, the wizard's catalogs), the wizard's configure/validate steps, the admin views of the
// schedule manager and the job queues, legal notices, newsletter, preview, data exports.

export type ImportsApiDeps = {
  listings: ImportListings;
  urlPreview: UrlPreviewDeps;
  adminJobs: AdminJobsDeps;
  notices: SiteNoticeDeps;
  dataExports: DataExportDeps;
};

export const importsApiRoutes: FastifyPluginAsync<{
  ingest: IngestHttpDeps;
  imports: ImportsApiDeps;
}> = async (app, { ingest, imports }) => {
  await app.register(importListRoutes, { ingest, listings: imports.listings });
  await app.register(adminJobRoutes, { adminJobs: imports.adminJobs });
  await app.register(siteNoticeRoutes, { notices: imports.notices });
  await app.register(dataExportRoutes, { exports: imports.dataExports });
  if (ingest.wizard)
    await app.register(ingestWizardRoutes, { wizard: ingest.wizard, urlPreview: imports.urlPreview });
};

import type { FastifyPluginAsync } from 'fastify';
import type { ScraperCollectionDeps } from '../../application/scrapers/scraper-collections.ts';
import { accountScraperRoutes } from './scrapers/scrapers-page.ts';
import { importPages } from './ingest/import-pages.ts';
import type { MyImportsDeps } from './ingest/my-imports.ts';
import { type DashboardDeps, dashboardRoutes } from './site/dashboard.ts';
import { type IngestProgressPageDeps, ingestProgressPage } from './ingest/ingest-progress.ts';
import { registerPage, type RegisterPageDeps } from './accounts/register-page.ts';
import { pageScriptRoutes } from './page-scripts.ts';

// The server-rendered pages (/dashboard, /dashboard/ingest, /account) as one adapter of their own.
// The composition root mounts it on the HTTP app after the app's hooks (who is calling, rate
// limits), which the pages rely on; the HTTP adapter never imports it (the arrow runs admin → http).
// The pages' scripts (web/account/) are served with them, by page-scripts.ts.

export type AdminPagesDeps = DashboardDeps & {
  /** The imports' progress page; without it /dashboard/ingest is not served. */
  ingest?: Omit<IngestProgressPageDeps, 'csrfSecret'>;
  /** The /account scraper pages; without them /account is not served. */
  scraperCollections?: ScraperCollectionDeps;
  /** The import wizard, my imports and the scheduled imports pages (/account/imports...). */
  imports?: Omit<MyImportsDeps, 'csrfSecret'>;
  /** The legal notices the registration page shows; without them /account/register is not served. */
  legalNotices?: RegisterPageDeps['notices'];
};

export const adminPages: FastifyPluginAsync<AdminPagesDeps> = async (app, deps) => {
  const { login, collections, flags, quotas, csrfSecret } = deps;
  await app.register(pageScriptRoutes);
  await app.register(dashboardRoutes, { login, collections, flags, quotas, csrfSecret });
  if (deps.ingest) await app.register(ingestProgressPage, { ...deps.ingest, csrfSecret });
  if (deps.scraperCollections)
    await app.register(accountScraperRoutes, { ...deps.scraperCollections, login, csrfSecret });
  if (deps.imports) await app.register(importPages, { ...deps.imports, csrfSecret });
  if (deps.legalNotices)
    await app.register(registerPage, { login, flags, notices: deps.legalNotices, csrfSecret });
};

import { guardedUrlFetcher } from '../adapters/fetch/guarded-url-fetcher.ts';
import { pruneEventChanges } from '../adapters/postgres/ingest/change-log-retention.ts';
import { CHANGE_RETENTION_SECONDS } from '../domain/read/change-cursor.ts';
import { previewFetchLimits } from '../adapters/fetch/preview-fetch-limits.ts';
import type { HttpFeature } from '../adapters/http/http-feature.ts';
import { ingestHttp, ingestWizardHttp } from '../adapters/http/ingest/ingest-http.ts';
import type { IngestHttpDeps } from '../adapters/http/ingest/ingest-file-routes.ts';
import type { ScraperUseCases } from '../application/scrapers/scraper-triggers.ts';
import { cronerSchedule } from '../adapters/jobs/croner-schedule.ts';
import {
  deferredCountsTask,
  fineCellsSwitchTask,
  startCountsRefreshWorker,
  startIngestWorker,
} from '../adapters/jobs/ingest-worker.ts';
import {
  pgBossScheduleQueue,
  scheduledIngestsTask,
  startScheduleWorkers,
} from '../adapters/jobs/schedule-workers.ts';
import { meteredGeocoder, meteredIngestStore } from '../adapters/metrics/instrument.ts';
import { importPages } from '../adapters/pages/ingest/import-pages.ts';
import { ingestProgressPage } from '../adapters/pages/ingest/ingest-progress.ts';
import { pageScriptRoutes } from '../adapters/pages/page-scripts.ts';
import type { DatabasePool } from '../adapters/postgres/database.ts';
import { postgresFineCellsSwitch } from '../adapters/postgres/ingest/fine-cells-switch.ts';
import { postgresImportListings } from '../adapters/postgres/ingest/import-listings.ts';
import { postgresIngestDrafts } from '../adapters/postgres/ingest/ingest-drafts.ts';
import { postgresIngestStore } from '../adapters/postgres/ingest/ingest-store.ts';
import { postgresScheduleStore } from '../adapters/postgres/ingest/schedule-store.ts';
import { webhookTokens } from '../adapters/security/webhook-tokens.ts';
import { scraperCsvImport } from '../application/ingest/import-scraper-csv.ts';
import { removeExpiredDrafts } from '../application/ingest/import-wizard.ts';
import type { ScheduleDeps } from '../application/ingest/scheduled-ingests.ts';
import type { Quotas } from '../ports/accounts/quotas.ts';
import type { CollectionRepository } from '../ports/collections/collection-repository.ts';
import type { FeatureWorkers, Infrastructure } from './infrastructure.ts';

// The ingestion pipeline: uploads and the import wizard, scheduled and webhook imports, the staged
// workers, and the CSV hand-over that scrapers use. Its HTTP part comes in two (http, wizardHttp),
// which src/compose.ts places among the other features' routes.

export function composeIngest(
  infra: Pick<
    Infrastructure,
    'config' | 'boss' | 'clock' | 'metrics' | 'log' | 'ingestFiles' | 'ingestQueue' | 'geocoder'
  >,
  on: DatabasePool,
  needs: {
    repository: CollectionRepository;
    quotas: Quotas;
  },
) {
  const { config, boss, clock, ingestQueue, geocoder } = infra;
  const { fileStore, sourceFiles } = infra.ingestFiles;
  const { quotas } = needs;
  const store = postgresIngestStore(on);
  const drafts = postgresIngestDrafts(on);
  const schedules: ScheduleDeps = {
    schedules: postgresScheduleStore(on),
    store,
    cron: cronerSchedule,
    tokens: webhookTokens,
    queue: pgBossScheduleQueue(boss),
    quotas,
    clock,
    hierarchy: needs.repository,
  };
  const deferredCounts = { store, countsRefresh: ingestQueue };
  // What the routes and pages of this feature share (built once, used only in an HTTP process).
  const httpIngest: IngestHttpDeps = {
    store,
    queue: ingestQueue,
    quotas,
    clock,
    retry: config.ingest.retry,
    fileStore,
    files: sourceFiles,
    maxFileSizeBytes: config.ingest.maxFileSizeBytes,
    hierarchy: needs.repository,
    schedules,
    geocoder,
    wizard: {
      drafts,
      store,
      queue: ingestQueue,
      quotas,
      hierarchy: needs.repository,
      files: sourceFiles,
      fileStore,
      clock,
      maxFileSizeBytes: config.ingest.maxFileSizeBytes,
    },
  };
  const listings = postgresImportListings(on);
  return {
    store,
    /** A scraper's CSV handed to this pipeline, counted against the scraper owner's upload quotas. */
    scraperImport: scraperCsvImport({ store, queue: ingestQueue, quotas, files: fileStore }),
    /**
     * Its routes and pages. The shared webhook endpoint asks the scrapers first, and the scrapers
     * are composed after this feature (they import through it): hence the argument.
     */
    http: (shared: {
      triggerScraperWebhook: ScraperUseCases['triggerWebhook'];
      csrfSecret: string;
    }): HttpFeature => {
      const { csrfSecret } = shared;
      return {
        ...ingestHttp({
          ingest: httpIngest,
          listings,
          triggerScraperWebhook: shared.triggerScraperWebhook,
        }),
        pages: async (app) => {
          // The import pages' browser modules (web/account/), which only these pages load.
          await app.register(pageScriptRoutes);
          await app.register(ingestProgressPage, { store, clock, csrfSecret });
          await app.register(importPages, { ingest: httpIngest, listings, csrfSecret });
        },
      };
    },
    /** The import wizard's configure/validate/preview-URL routes (placed by src/compose.ts). */
    wizardHttp: (): HttpFeature =>
      ingestWizardHttp({
        ingest: httpIngest,
        urlPreview: {
          fetcher: guardedUrlFetcher(previewFetchLimits(config.ingest.fetch)),
          fileStore,
          files: sourceFiles,
        },
      }),
    workers: (): FeatureWorkers => ({
      start: async () => {
        await startScheduleWorkers(
          boss,
          { ...schedules, fetcher: guardedUrlFetcher(config.ingest.fetch), files: fileStore, ingestQueue },
          infra.log,
        );
        await startIngestWorker(
          boss,
          {
            store: meteredIngestStore(store, infra.metrics),
            files: sourceFiles,
            geocoder: geocoder && meteredGeocoder(geocoder, infra.metrics),
            queue: ingestQueue,
            clock,
            retry: config.ingest.retry,
            batchSize: config.ingest.batchSize,
            deferCountsMinRows: config.ingest.deferCountsMinRows,
            deferredWriters: config.ingest.deferredWriters,
            countsRefresh: ingestQueue,
            quotas,
          },
          { concurrency: config.ingest.concurrency, log: infra.log },
        );
        await startCountsRefreshWorker(boss, deferredCounts, infra.log);
      },
      periodicTasks: [
        scheduledIngestsTask(schedules, infra.log),
        deferredCountsTask(deferredCounts, infra.log),
        // The level-16 cells kept only while views read them (docs/scaling.md, "Step 3").
        fineCellsSwitchTask({ cells: postgresFineCellsSwitch(on), clock }, infra.log),
        { name: 'expired uploads', run: () => removeExpiredDrafts({ drafts, fileStore, clock, quotas }) },
        // The change feed's retention (GET /api/v1/changes; docs/api-v1.md): older changes are removed.
        {
          name: 'change feed retention',
          run: () => pruneEventChanges(on, CHANGE_RETENTION_SECONDS),
        },
      ],
    }),
  };
}

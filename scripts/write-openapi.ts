// Writes docs/openapi.json from the route schemas, so the committed contract follows the code.
// The test run fails when the two differ (test/integration/service/openapi.test.ts).
import type { SavedViewStore } from '../src/ports/site/saved-view-store.ts';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { PgBoss } from 'pg-boss';
import { loadConfig, projectRoot } from '../src/adapters/config/environment.ts';
import { accountsHttp } from '../src/adapters/http/accounts/account-hooks.ts';
import { buildHttpApp } from '../src/adapters/http/app.ts';
import { ingestHttp } from '../src/adapters/http/ingest/ingest-http.ts';
import { readHttp } from '../src/adapters/http/read/read-http.ts';
import { scrapersHttp } from '../src/adapters/http/scrapers/scrapers-http.ts';
import { siteHttp } from '../src/adapters/http/site/site-http.ts';
import { createMetrics } from '../src/adapters/metrics/registry.ts';
import type { EventExporter } from '../src/ports/read/event-exporter.ts';
import type { BackgroundExports } from '../src/application/read/background-exports.ts';
import type { EventReader } from '../src/ports/read/event-reader.ts';
import type { ChangeFeed } from '../src/ports/read/change-feed.ts';
import type { EventProvenanceReader } from '../src/ports/read/event-provenance.ts';
import type { DatabasePool } from '../src/adapters/postgres/database.ts';
import { composeFeatures, processInfrastructure, VERSION } from '../src/compose.ts';

const unused = () => {
  throw new Error('not called while generating the document');
};
const config = loadConfig({ NODE_ENV: 'test' });
// Adapters only keep the pool and the job queue; nothing queries or sends while the document is generated.
const nothing = {} as DatabasePool;
const composed = composeFeatures(
  processInfrastructure(config, {} as PgBoss, nothing, createMetrics()),
  nothing,
);
const accounts = composed.accounts.httpDeps();
const app = await buildHttpApp(
  {
    version: VERSION,
    features: [
      siteHttp({
        version: VERSION,
        views: { views: new Proxy({}, { get: () => unused }) as SavedViewStore },
        health: {
          database: { ping: unused, postgis: unused, pendingMigrations: unused },
          environment: { missingVariables: () => [] },
        },
      }),
      readHttp({
        readApi: {
          events: new Proxy({}, { get: () => unused }) as EventReader,
          exporter: new Proxy({}, { get: () => unused }) as EventExporter,
          changes: new Proxy({}, { get: () => unused }) as ChangeFeed,
          provenance: new Proxy({}, { get: () => unused }) as EventProvenanceReader,
          exportJobs: new Proxy({}, { get: () => unused }) as BackgroundExports,
        },
        tiles: { tiles: { vectorTile: unused, dataVersion: unused } },
        ogc: {
          events: new Proxy({}, { get: () => unused }) as EventReader,
          clock: { now: () => new Date() },
        },
      }),
      ingestHttp({
        ingest: {
          store: new Proxy({}, { get: () => unused }) as never,
          queue: { enqueueIngestJob: unused },
          quotas: new Proxy({}, { get: () => unused }) as never,
          clock: { now: () => new Date() },
          retry: config.ingest.retry,
          fileStore: new Proxy({}, { get: () => unused }) as never,
          files: new Proxy({}, { get: () => unused }) as never,
          maxFileSizeBytes: config.ingest.maxFileSizeBytes,
          hierarchy: { hierarchy: unused },
          schedules: new Proxy({}, { get: () => unused }) as never,
          wizard: new Proxy({}, { get: () => unused }) as never,
        },
        listings: new Proxy({}, { get: () => unused }) as never,
      }),
      // The same order as src/compose.ts lists the features in.
      composed.site.adminHttp(),
      composed.accounts.dataExportsHttp(),
      composed.ingest.wizardHttp(),
      accountsHttp(accounts),
      composed.collections.http(accounts.collections),
      composed.accounts.quotasHttp(),
      composed.accounts.apiKeysHttp(),
      composed.site.flagsHttp(),
      scrapersHttp({
        triggers: undefined,
        collections: {
          repository: new Proxy({}, { get: () => unused }) as never,
          scrapers: new Proxy({}, { get: () => unused }) as never,
        },
      }),
      // Its routes only: the account page is hidden from the document.
      { routes: composed.subscriptions.http('').routes },
    ],
  },
  { logLevel: 'silent', bodyLimitBytes: config.bodyLimitBytes },
);
await app.ready();
const file = path.join(projectRoot, 'docs', 'openapi.json');
writeFileSync(file, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);

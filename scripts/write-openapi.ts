// Writes docs/openapi.json from the route schemas, so the committed contract follows the code.
// The test run fails when the two differ (test/integration/service/openapi.test.ts).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, projectRoot } from '../src/adapters/config/environment.ts';
import { buildHttpApp } from '../src/adapters/http/app.ts';
import type { EventExporter } from '../src/ports/read/event-exporter.ts';
import type { EventReader } from '../src/ports/read/event-reader.ts';
import type { DatabasePool } from '../src/adapters/postgres/database.ts';
import { composeAccounts, VERSION } from '../src/compose.ts';

const unused = () => {
  throw new Error('not called while generating the document');
};
const app = await buildHttpApp(
  {
    version: VERSION,
    health: {
      database: { ping: unused, postgis: unused, pendingMigrations: unused },
      environment: { missingVariables: () => [] },
    },
    readApi: {
      events: new Proxy({}, { get: () => unused }) as EventReader,
      exporter: new Proxy({}, { get: () => unused }) as EventExporter,
    },
    tiles: { tiles: { vectorTile: unused } },
    ogc: { events: new Proxy({}, { get: () => unused }) as EventReader, clock: { now: () => new Date() } },
    ingest: {
      store: new Proxy({}, { get: () => unused }) as never,
      queue: { enqueueIngestJob: unused },
      quotas: new Proxy({}, { get: () => unused }) as never,
      clock: { now: () => new Date() },
      retry: loadConfig({}).ingest.retry,
      fileStore: new Proxy({}, { get: () => unused }) as never,
      files: new Proxy({}, { get: () => unused }) as never,
      maxFileSizeBytes: loadConfig({}).ingest.maxFileSizeBytes,
      hierarchy: { hierarchy: unused },
      schedules: new Proxy({}, { get: () => unused }) as never,
      wizard: new Proxy({}, { get: () => unused }) as never,
    },
    imports: new Proxy({}, { get: () => new Proxy({}, { get: () => unused }) }) as never,
    // Adapters only keep the pool; nothing queries it while the document is generated.
    accounts: composeAccounts(loadConfig({ NODE_ENV: 'test' }), {} as DatabasePool),
    scraperCollections: {
      repository: new Proxy({}, { get: () => unused }) as never,
      scrapers: new Proxy({}, { get: () => unused }) as never,
    },
  },
  { logLevel: 'silent', bodyLimitBytes: loadConfig({}).bodyLimitBytes },
);
await app.ready();
const file = path.join(projectRoot, 'docs', 'openapi.json');
writeFileSync(file, `${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`);

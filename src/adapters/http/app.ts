import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import type { HealthDeps } from '../../application/check-health.ts';
import { type AccountsDeps, installAccountHooks, registerAccountRoutes } from './accounts.ts';
import { ErrorBody } from './error-body.ts';
import { installErrorHandling, toErrorResponse } from './error-handling.ts';
import { installInputGuards } from './input-guards.ts';
import { installRequireUser } from './require-user.ts';
import { recordRoutes } from './route-registry.ts';
import { installClientGoneCancellation, type RequestQueryScopes } from './client-gone.ts';
import { DEFAULT_BUDGETS } from '../config/budget-config.ts';
import { HealthReportSchema, healthRoutes } from './routes/health.ts';
import { type ReadApiDeps, v1EventRoutes } from './routes/v1-events.ts';
import { type IngestHttpDeps, ingestRoutes } from './routes/ingest.ts';
import { ingestJobRoutes } from './routes/ingest-jobs.ts';
import { INGEST_SHARED_SCHEMAS } from './routes/ingest-schemas.ts';
import { WIZARD_SCHEMAS } from './routes/ingest-wizard-docs.ts';
import { scheduledIngestRoutes } from './routes/scheduled-ingests.ts';
import { type ImportsApiDeps, importsApiRoutes } from './routes/imports-api.ts';
import { type Authenticate, type ScraperUseCases, scraperRoutes } from './routes/scrapers.ts';
import { type ExploreOptions, exploreRoutes } from '../web/explore.ts';
import { scraperCollectionRoutes, scraperCollectionSchemas } from './routes/scraper-collections.ts';
import { accountScraperRoutes } from '../admin/account-scrapers.ts';
import { importPages } from '../admin/import-pages.ts';
import type { ScraperCollectionDeps } from '../../application/scrapers/scraper-collections.ts';

// The HTTP adapter: builds a Fastify instance from use-case dependencies handed over by the
// composition root. It owns no state of its own.

export type HttpDeps = {
  health: HealthDeps;
  version: string;
  /** Feature areas are optional so a test (or a slimmer process) can build the app with only what it needs. */
  readApi?: ReadApiDeps;
  ingest?: IngestHttpDeps;
  /** Authentication, access control, collections, quotas, rate limits, feature flags, dashboard. */
  accounts?: AccountsDeps;
  scrapers?: ScraperUseCases;
  /** Import lists, the wizard's routes, data exports, legal notices and the admin job views (with ingest). */
  imports?: ImportsApiDeps;
  /** The Explore page at `/` (without it `/` answers the JSON index only). */
  explore?: Omit<ExploreOptions, 'version' | 'index'>;
  /** The scraper-repos, scrapers and scraper-runs collections; they need the accounts hooks. */
  scraperCollections?: ScraperCollectionDeps;
  /** Who is calling for the scraper routes; by default the accounts hooks' request.viewer. Tests inject their own. */
  authenticate?: Authenticate;
  /** Cancels a request's SQL statements when its client disconnects (postgres/query-cancellation.ts). */
  queryScopes?: RequestQueryScopes;
};

export type HttpOptions = {
  logLevel: string;
  bodyLimitBytes: number;
  /** Express that we sit behind a TLS-terminating proxy (affects Secure cookies and client IPs). */
  trustProxy?: boolean;
  /** Slow clients (docs/api.md, "Budgets, caps and limits"); defaults in config/budget-config.ts. */
  timeouts?: Partial<HttpTimeouts>;
};

export type HttpTimeouts = {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
};

export const MAX_HEADER_BYTES = 16 * 1024;

const DEFAULT_TIMEOUTS: HttpTimeouts = {
  headersTimeoutMs: DEFAULT_BUDGETS.headersTimeoutMs,
  requestTimeoutMs: DEFAULT_BUDGETS.requestTimeoutMs,
  connectionTimeoutMs: DEFAULT_BUDGETS.connectionTimeoutMs,
};

function clientErrorAnswer(
  code: string | undefined,
): [number, { error: string; message: string; code: string }] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return [
      408,
      {
        error: 'Request Timeout',
        message: 'the request took longer than allowed to arrive',
        code: 'REQUEST_TIMEOUT',
      },
    ];
  if (code === 'HPE_HEADER_OVERFLOW')
    return [
      400,
      {
        error: 'Bad Request',
        message: `request headers exceed ${MAX_HEADER_BYTES} bytes`,
        code: 'HEADERS_TOO_LARGE',
      },
    ];
  return [400, { error: 'Bad Request', message: 'malformed HTTP request', code: 'MALFORMED_REQUEST' }];
}

export async function buildHttpApp(deps: HttpDeps, options: HttpOptions): Promise<FastifyInstance> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const app = Fastify({
    logger: { level: options.logLevel },
    bodyLimit: options.bodyLimitBytes,
    routerOptions: { maxParamLength: 200 },
    trustProxy: options.trustProxy ?? false,
    // Node checks the header and request deadlines every connectionsCheckingInterval (30 s by
    // default, which let slow headers live ~80 s): check often enough for the budgets to hold.
    http: {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: timeouts.headersTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    // The whole request, body included (a body trickling a byte a second is cut here), and any
    // connection silent for connectionTimeout.
    requestTimeout: timeouts.requestTimeoutMs,
    connectionTimeout: timeouts.connectionTimeoutMs,
    ajv: {
      // Unknown parameters are an error (400), not silently dropped.
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    clientErrorHandler: (error, socket) => {
      // Errors before a request exists (oversized headers, malformed request lines, a request
      // slower than its budget): answer with the spec's error body rather than Node's bare default.
      if (!socket.writable) return;
      const code = (error as { code?: string }).code;
      const [status, body] = clientErrorAnswer(code);
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 ${status} ${body.error}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
      );
    },
  });

  recordRoutes(app);
  app.addSchema(ErrorBody);
  app.addSchema(HealthReportSchema);
  for (const schema of INGEST_SHARED_SCHEMAS) app.addSchema(schema);
  for (const schema of WIZARD_SCHEMAS) app.addSchema(schema);
  installErrorHandling(app);
  installInputGuards(app);
  installRequireUser(app);
  if (deps.queryScopes) installClientGoneCancellation(app, deps.queryScopes);
  // Before any route: every route, /api/v1 included, knows who is calling and may be rate limited.
  if (deps.accounts) await installAccountHooks(app, deps.accounts);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Chronomap API',
        version: deps.version,
        description:
          'Events on a map and a timeline. `/api/v1/*` is the stable public read API; other `/api/*` routes are internal ' +
          'and may change. Every error answers `{error, message?, details?, code?}`.',
      },
      tags: [
        { name: 'system', description: 'Health and service metadata' },
        { name: 'events', description: 'Public read API: events, map clusters, histograms and counts' },
        { name: 'sources', description: 'Public read API: catalogs and datasets' },
        {
          name: 'ingestion',
          description: 'File uploads, the staged ingestion pipeline, progress and recovery',
        },
        { name: 'accounts', description: 'Login, registration and your own account (internal API)' },
        {
          name: 'collections',
          description:
            'Payload CMS-style collection endpoints with collection-level access control (internal API)',
        },
        { name: 'scrapers', description: 'Scraper repos, scrapers and runs (internal)' },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });

  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
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

  await app.register(healthRoutes, { health: deps.health });
  if (deps.readApi) await app.register(v1EventRoutes, deps.readApi);
  if (deps.ingest) {
    await app.register(ingestRoutes, { ingest: deps.ingest });
    await app.register(ingestJobRoutes, { ingest: deps.ingest });
    await app.register(scheduledIngestRoutes, {
      ingest: deps.ingest,
      ...(deps.scrapers ? { triggerScraperWebhook: deps.scrapers.triggerWebhook } : {}),
    });
    if (deps.imports) await app.register(importsApiRoutes, { ingest: deps.ingest, imports: deps.imports });
  }
  if (deps.accounts) await registerAccountRoutes(app, deps.accounts);
  if (deps.accounts && deps.scraperCollections) {
    for (const schema of scraperCollectionSchemas) app.addSchema(schema);
    await app.register(scraperCollectionRoutes, deps.scraperCollections);
    await app.register(accountScraperRoutes, {
      ...deps.scraperCollections,
      login: deps.accounts.login,
      csrfSecret: deps.accounts.csrfSecret,
    });
  }
  if (deps.accounts && deps.ingest && deps.imports) {
    await app.register(importPages, {
      ingest: deps.ingest,
      listings: deps.imports.listings,
      csrfSecret: deps.accounts.csrfSecret,
    });
  }
  await app.register(scraperRoutes, {
    scrapers: deps.scrapers,
    ...(deps.authenticate ? { authenticate: deps.authenticate } : {}),
  });
  return app;
}

export { toErrorResponse };

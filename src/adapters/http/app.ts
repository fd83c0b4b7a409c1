import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { ErrorBody } from './error-body.ts';
import { installRequestLogging, requestIdFor } from './request-logging.ts';
import { installErrorHandling } from './error-handling.ts';
import type { HttpFeature } from './http-feature.ts';
import { installInputGuards } from './input-guards.ts';
import { DOCUMENTED_KEYWORDS, OPENAPI_DOCUMENT_BASE, OPENAPI_DOCUMENT_HOOKS } from './openapi-document.ts';
import { installHttpCaching } from './http-caching.ts';
import { installPublicWeb } from './public-web.ts';
import { installRequireUser } from './require-user.ts';
import { recordRoutes } from './route-registry.ts';
import { installReadYourWrites, type ReadYourWrites } from './read-your-writes.ts';
import { installHttpMetrics, metricsRoute } from '../metrics/http-metrics.ts';
import type { ChronomapMetrics } from '../metrics/registry.ts';
import { installQueryScopes, type RequestQueryScopes } from './client-gone.ts';
import { DEFAULT_BUDGETS } from '../config/budget-config.ts';
import { HealthReportSchema } from './site/health-schemas.ts';
import { V1_SHARED_SCHEMAS } from './read/events-schemas.ts';
import { INGEST_SHARED_SCHEMAS } from './ingest/ingest-schemas.ts';
import { WIZARD_SCHEMAS } from './ingest/wizard-docs.ts';
import { installPublicBaseUrl } from './public-url.ts';
import { buildResponseSerializers } from './response-serializers.ts';

// The HTTP adapter: builds a Fastify instance (error handling, input guards, public-web headers,
// the OpenAPI document) and registers what each feature hands over (http-feature.ts), in the
// order given. It owns no state of its own and registers no feature's routes or pages: the
// composition modules (src/composition/) build them. It only adds, first, the schemas that routes
// of several features share, which also fixes their order in the OpenAPI document.

type HttpDeps = {
  version: string;
  /** PUBLIC_BASE_URL: the origin of every absolute link the service writes (public-url.ts). */
  publicBaseUrl?: string | undefined;
  /**
   * The features' hooks, routes and pages, in the order their routes register: the OpenAPI
   * document lists paths in that order. A test (or a slimmer process) passes only what it needs.
   */
  features: HttpFeature[];
  /** Cancels a request's SQL statements when its client disconnects or its time budget runs out (client-gone.ts). */
  queryScopes?: RequestQueryScopes;
  /** With read replicas: the caller's last write position for their reads (read-your-writes.ts). */
  readYourWrites?: ReadYourWrites;
  /**
   * Request metrics, and GET /api/metrics for a caller with the token (metrics/http-metrics.ts),
   * answering `text()`: what METRICS_BIND serves (the sum of all processes: cluster-metrics.ts).
   */
  metrics?: { metrics: ChronomapMetrics; token: string | undefined; text: () => Promise<string> };
};

type HttpOptions = {
  logLevel: string;
  /** Where the log lines go (default standard output); tests read them. */
  logStream?: NodeJS.WritableStream;
  bodyLimitBytes: number;
  /** Express that we sit behind a TLS-terminating proxy (affects Secure cookies and client IPs). */
  trustProxy?: boolean;
  /** Slow clients (docs/api.md, "Budgets, caps and limits"); defaults in config/budget-config.ts. */
  timeouts?: Partial<HttpTimeouts>;
  /** Origins that may read the public paths cross-origin (CORS_ORIGINS; public-web.ts); unset: any. */
  corsOrigins?: string[] | null;
};

type HttpTimeouts = {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  connectionTimeoutMs: number;
  /** The time budgets of whole read requests (client-gone.ts). */
  readRequestBudgetMs: number;
  collectionsRequestBudgetMs: number;
};

const MAX_HEADER_BYTES = 16 * 1024;

const DEFAULT_TIMEOUTS: HttpTimeouts = {
  headersTimeoutMs: DEFAULT_BUDGETS.headersTimeoutMs,
  requestTimeoutMs: DEFAULT_BUDGETS.requestTimeoutMs,
  connectionTimeoutMs: DEFAULT_BUDGETS.connectionTimeoutMs,
  readRequestBudgetMs: DEFAULT_BUDGETS.readRequestBudgetMs,
  collectionsRequestBudgetMs: DEFAULT_BUDGETS.collectionsRequestBudgetMs,
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
    logger: { level: options.logLevel, ...(options.logStream ? { stream: options.logStream } : {}) },
    // request-logging.ts: UUIDs or the caller's X-Request-Id, one redacted line per request.
    genReqId: requestIdFor,
    requestIdHeader: false,
    // request-logging.ts writes the one line per request; Fastify's own lines are off (the
    // LogController form: the top-level disableRequestLogging is deprecated in Fastify 5.12).
    logController: new LogController({ disableRequestLogging: true }),
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
    // An idle keep-alive connection is closed by Node's keepAliveTimeout, not by the socket timeout
    // above (Fastify's default, 72 s, let idle connections live 73.8 s against the documented 30 s).
    keepAliveTimeout: timeouts.connectionTimeoutMs,
    // Each route's serializer is built with only the shared schemas it refers to (why: there).
    schemaController: { compilersFactory: { buildSerializer: buildResponseSerializers } },
    ajv: {
      // Unknown parameters are an error (400), not silently dropped.
      customOptions: {
        removeAdditional: false,
        coerceTypes: 'array',
        useDefaults: true,
        allErrors: false,
        keywords: DOCUMENTED_KEYWORDS,
      },
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
  for (const schema of [...INGEST_SHARED_SCHEMAS, ...V1_SHARED_SCHEMAS, ...WIZARD_SCHEMAS])
    app.addSchema(schema);
  installRequestLogging(app);
  installErrorHandling(app);
  installInputGuards(app);
  installRequireUser(app);
  if (deps.metrics) installHttpMetrics(app, deps.metrics.metrics);
  if (deps.readYourWrites) installReadYourWrites(app, deps.readYourWrites);
  if (deps.queryScopes)
    installQueryScopes(app, deps.queryScopes, {
      readMs: timeouts.readRequestBudgetMs,
      collectionsMs: timeouts.collectionsRequestBudgetMs,
    });
  // Before any route: every route, /api/v1 included, knows who is calling and may be rate limited.
  for (const feature of deps.features) await feature.hooks?.(app);
  // Before any route too: CORS, compression and HTTP caching go by URL prefix (public-web.ts,
  // http-caching.ts), so every public route registered below, whoever writes it, gets them.
  installPublicBaseUrl(app, deps.publicBaseUrl);
  await installPublicWeb(app, { corsOrigins: options.corsOrigins ?? null });
  installHttpCaching(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      ...OPENAPI_DOCUMENT_BASE,
      info: {
        title: 'Chronomap API',
        license: { name: 'AGPL-3.0-or-later', identifier: 'AGPL-3.0-or-later' },
        version: deps.version,
        description:
          'Events on a map and a timeline. `/api/v1/*` is the stable public read API; other `/api/*` routes are internal ' +
          'and may change. Every error answers `{error, message?, details?, code?}`.',
      },
      tags: [
        { name: 'system', description: 'Health and service metadata' },
        { name: 'events', description: 'Public read API: events, map clusters, histograms and counts' },
        { name: 'sources', description: 'Public read API: catalogs and datasets' },
        { name: 'ogc', description: 'OGC API – Features, Part 1 Core + GeoJSON: one collection per dataset' },
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
        { name: 'views', description: 'Saved views of the Explore page, their short links and embeds' },
      ],
    },
    ...OPENAPI_DOCUMENT_HOOKS,
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/api/docs' });

  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  if (deps.metrics) metricsRoute(app, deps.metrics.text, deps.metrics.token);
  for (const feature of deps.features) await feature.routes?.(app);
  // After every route and the hooks, which tell the pages who is calling.
  for (const feature of deps.features) await feature.pages?.(app);
  return app;
}

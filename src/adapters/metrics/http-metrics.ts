import { timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ChronomapMetrics } from './registry.ts';

// Where the metrics can be read (docs/operations.md, "Metrics"): a listener of their own on the
// address the operator names (METRICS_BIND, never exposed with the API), and/or GET /api/metrics
// on the API for a caller with METRICS_TOKEN. Without either, the API does not serve them.

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** Times every request under its route pattern (not its URL: ids would explode the label set). */
export function installHttpMetrics(app: FastifyInstance, metrics: ChronomapMetrics): void {
  app.addHook('onResponse', async (request, reply) => {
    metrics.httpRequestDuration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });
}

/**
 * GET /api/metrics: the Prometheus text for `Authorization: Bearer <METRICS_TOKEN>`, the same
 * `text()` as the METRICS_BIND listener serves (with several API processes, the primary's sum of all:
 * cluster-metrics.ts). Without the token (or with none configured) the route answers as an unknown
 * one does.
 */
export function metricsRoute(
  app: FastifyInstance,
  text: () => Promise<string>,
  token: string | undefined,
): void {
  const expected = token ? Buffer.from(`Bearer ${token}`) : undefined;
  app.get('/api/metrics', { schema: { hide: true } }, async (request, reply) => {
    const given = Buffer.from(request.headers.authorization ?? '');
    if (!expected || given.length !== expected.length || !timingSafeEqual(given, expected))
      return reply.callNotFound();
    let body: string;
    try {
      body = await text();
    } catch (error) {
      request.log.warn({ err: error }, 'metrics unavailable');
      return reply
        .code(503)
        .type('text/plain; charset=utf-8')
        .send(`metrics unavailable: ${(error as Error).message}\n`);
    }
    return reply.type(PROMETHEUS_TEXT).send(body);
  });
}

/**
 * A plain HTTP listener answering GET /metrics on `host:port` (METRICS_BIND) with `text()`: this
 * process's registry, or with several API processes the sum of all (cluster-metrics.ts).
 */
export async function startMetricsListener(
  bind: { host: string; port: number },
  text: () => Promise<string>,
): Promise<{ address: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    text().then(
      (body) => response.writeHead(200, { 'content-type': PROMETHEUS_TEXT }).end(body),
      (error: unknown) =>
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(bind.port, bind.host, () => resolve());
  });
  const where = server.address();
  const port = typeof where === 'object' && where ? where.port : bind.port;
  return {
    address: `http://${bind.host.includes(':') ? `[${bind.host}]` : bind.host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

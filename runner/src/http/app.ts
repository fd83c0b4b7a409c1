// The runner's HTTP API. Routes: POST /run, POST /stop/{run_id}, GET /status/{run_id} behind the
// bearer key; GET /health, GET /metrics and GET /metrics/prometheus open (monitoring). Every error answers
// { error, message?, details?, code? }.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { RunnerError, STATUS_TEXT } from '../errors.ts';
import type { RunManager } from '../run-manager.ts';
import type { RunRequest } from '../run-types.ts';
import { bearerMatches } from './auth.ts';
import { runnerPrometheusRegistry } from './prometheus.ts';
import { runResponseBody } from './run-response.ts';
import {
  ErrorBody,
  HealthResponse,
  MetricsResponse,
  RunBody,
  RunIdParams,
  RunResponse,
  StatusResponse,
  StopResponse,
} from './schemas.ts';

const OPEN_ROUTES = new Set(['/health', '/metrics', '/metrics/prometheus']);

export interface AppOptions {
  logger?: boolean;
  /** Where the log lines go when logging (default standard output); tests read them. */
  logStream?: NodeJS.WritableStream;
}

/**
 * The id a request's log lines carry (`reqId`): the caller's X-Request-Id when it is a short safe
 * token (the main application sends the id of the request a run or stop was asked for), else a
 * new UUID. It is returned as X-Request-Id.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestIdOf(header: string | string[] | undefined): string {
  return typeof header === 'string' && SAFE_REQUEST_ID.test(header) ? header : randomUUID();
}

export function buildApp(runs: RunManager, options: AppOptions = {}): FastifyInstance {
  const config = runs.config;
  const app = Fastify({
    logger: options.logger ? (options.logStream ? { stream: options.logStream } : true) : false,
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    // Inline code maps may be as large as a repository.
    bodyLimit: config.maxRepoSizeMb * 1024 * 1024 * 2 + 1024 * 1024,
    // Runs last up to an hour.
    requestTimeout: 0,
    // Unknown fields are an error, not silently dropped (Fastify's default removes them).
    ajv: { customOptions: { allErrors: false, coerceTypes: false, removeAdditional: false } },
  });

  const errorBody = (statusCode: number, code: string | undefined, message: string, details?: string) => ({
    error: STATUS_TEXT[statusCode] ?? 'Error',
    message,
    ...(details === undefined ? {} : { details }),
    ...(code === undefined ? {} : { code }),
  });

  app.setErrorHandler((err: FastifyError | RunnerError, request, reply) => {
    if (err instanceof RunnerError) {
      return reply.code(err.statusCode).send(errorBody(err.statusCode, err.code, err.message, err.details));
    }
    if (err.validation) {
      return reply
        .code(400)
        .send(
          errorBody(
            400,
            'VALIDATION_ERROR',
            `${err.validationContext ?? 'request'}${err.message.startsWith('body') ? err.message.slice(4) : ` ${err.message}`}`,
          ),
        );
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 500) request.log.error(err);
    // 4xx from Fastify itself (bad JSON, body too large) keep their message; 5xx internals stay hidden.
    return reply
      .code(status)
      .send(
        errorBody(
          status,
          status === 500 ? 'INTERNAL' : err.code,
          status === 500 ? 'internal error' : err.message,
        ),
      );
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody(404, 'NOT_FOUND', `no route ${request.method} ${request.url}`)),
  );

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (OPEN_ROUTES.has(request.routeOptions.url ?? '')) return;
    if (!bearerMatches(request.headers.authorization, config.apiKey)) {
      return reply.code(401).send(errorBody(401, 'UNAUTHORIZED', 'missing or wrong bearer key'));
    }
  });

  const errors = {
    400: ErrorBody,
    401: ErrorBody,
    404: ErrorBody,
    429: ErrorBody,
    500: ErrorBody,
    503: ErrorBody,
  };

  app.post<{ Body: Static<typeof RunBody> }>(
    '/run',
    { schema: { body: RunBody, response: { 200: RunResponse, ...errors } } },
    async (request, reply) => {
      const { csv, ...result } = await runs.execute(request.body as RunRequest);
      if (csv === undefined) return result;
      // Streamed: a large CSV and its base64 are never held whole (run-response.ts).
      return reply.type('application/json; charset=utf-8').send(Readable.from(runResponseBody(result, csv)));
    },
  );

  app.post<{ Params: Static<typeof RunIdParams> }>(
    '/stop/:run_id',
    { schema: { params: RunIdParams, response: { 200: StopResponse, ...errors } } },
    async (request) => {
      const { run_id } = request.params;
      if (!runs.stop(run_id))
        throw new RunnerError(404, 'RUN_NOT_FOUND', `run ${run_id} is not active on this runner`);
      return { run_id, stopping: true };
    },
  );

  app.get<{ Params: Static<typeof RunIdParams> }>(
    '/status/:run_id',
    { schema: { params: RunIdParams, response: { 200: StatusResponse, ...errors } } },
    async (request) => {
      return runs.status(request.params.run_id);
    },
  );

  app.get('/health', { schema: { response: { 200: HealthResponse } } }, async () => ({
    status: 'ok' as const,
    active_runs: runs.activeRuns,
    timestamp: new Date().toISOString(),
  }));

  app.get('/metrics', { schema: { response: { 200: MetricsResponse } } }, async () => runs.metrics());
  const prometheus = runnerPrometheusRegistry(runs);
  app.get('/metrics/prometheus', async (_request, reply) =>
    reply.type(prometheus.contentType).send(await prometheus.metrics()),
  );

  return app;
}

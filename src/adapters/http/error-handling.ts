import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { DomainError, type DomainErrorKind, ValidationError } from '../../domain/errors.ts';
import { RateLimitedError } from '../../domain/accounts/rate-limits.ts';
import { classifyDatabaseError } from './database-errors.ts';
import { type ErrorBodyShape, reasonPhrase } from './error-body.ts';
import { sendRateLimited, setRefusalHeaders } from './rate-limit.ts';

// One place turns every failure into the spec's error body. Domain errors map to statuses here
// (never the other way round), for the API and the server pages alike; anything unexpected is a
// 500 that reveals nothing internal.

/** What a 503 asks clients and proxies to wait before trying again. */
const RETRY_AFTER_SECONDS = '5';

const STATUS_BY_KIND: Record<DomainErrorKind, number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  quota_exceeded: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  rate_limited: 429,
  unavailable: 503,
};

/** The HTTP status of a refusal by the domain: the one map, used by the API's errors and every page. */
export function domainErrorStatus(error: DomainError): number {
  return STATUS_BY_KIND[error.kind];
}

/**
 * The status an HTML page answers for a failure: a domain error's from the map above, a framework
 * error's own (a 4xx from Fastify), the database's as the API answers it (503 when it cannot be
 * reached or a statement ran out of its budget, with Retry-After), otherwise 500. A rate-limit
 * refusal also gets its headers.
 */
export function pageErrorStatus(error: FastifyError | Error, reply: FastifyReply): number {
  return pageFailure(error, reply).status;
}

/** What a server page shows for a failure: its status, a heading and a message safe to show. */
type PageFailure = { status: number; heading: string; message: string };

/**
 * A failure as a page (the dashboard's and the account pages' error handlers): the API's status
 * for it (toErrorResponse's), and its message unless it is a 500, which reveals nothing internal. A database that is
 * gone is a 503 page saying so, never a 500 (issue 31 §4).
 */
export function pageFailure(error: FastifyError | Error, reply: FastifyReply): PageFailure {
  if (error instanceof RateLimitedError) setRefusalHeaders(reply, error.decision);
  let status = 500;
  let message = 'An unexpected error occurred; it has been logged.';
  if (error instanceof DomainError) [status, message] = [domainErrorStatus(error), error.message];
  else {
    // The API's answer for it (a framework 4xx, the database's 503, a multipart body cut short:
    // 400), so that a page does not answer 500 where the API answers the client's fault (issue 30 §8).
    const answer = toErrorResponse(error);
    if (answer.status !== 500) [status, message] = [answer.status, answer.body.message ?? message];
  }
  if (status === 503) reply.header('retry-after', RETRY_AFTER_SECONDS);
  const heading =
    status === 404 ? 'Not found' : status === 503 ? 'Try again shortly' : 'Something went wrong';
  return { status, heading, message };
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // The spec gives rate limits their own body and headers.
    if (error instanceof RateLimitedError) return sendRateLimited(reply, error);
    const { status, body } = toErrorResponse(error);
    if (status === 503) reply.header('retry-after', RETRY_AFTER_SECONDS);
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ status, code: body.code }, body.message ?? body.error);
    return reply.status(status).send(body);
  });

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({
      error: 'Not Found',
      message: `No route ${request.method} ${request.url.split('?')[0]}`,
      code: 'ROUTE_NOT_FOUND',
    } satisfies ErrorBodyShape),
  );
}

/**
 * busboy's words for a multipart body cut short or malformed: the client's fault, not ours. A file
 * part the body ends inside, once busboy has passed more than its first chunk (about 64 KiB) on,
 * fails with "Part terminated early" (issue 30 §7: it answered 500).
 */
const TRUNCATED_MULTIPART =
  /^(Unexpected end of (form|file|multipart data)|Part terminated early|Malformed part header|Multipart: Boundary not found)/i;

export function toErrorResponse(error: FastifyError | Error): { status: number; body: ErrorBodyShape } {
  if (error instanceof DomainError) {
    const status = domainErrorStatus(error);
    const body: ErrorBodyShape = { error: reasonPhrase(status), message: error.message };
    if (error.code) body.code = error.code;
    if (error.details) body.details = error.details;
    if (error instanceof ValidationError && error.field && !body.details)
      body.details = `field: ${error.field}`;
    return { status, body };
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return {
      status: 400,
      body: {
        error: 'Bad Request',
        message: describeValidation(fastifyError),
        code: 'INVALID_PARAMETER',
      },
    };
  }
  const status = fastifyError.statusCode;
  if (status && status >= 400 && status < 500) {
    return {
      status,
      body: { error: reasonPhrase(status), message: fastifyError.message, code: fastifyError.code },
    };
  }
  const fromDatabase = classifyDatabaseError(error);
  if (fromDatabase) return fromDatabase;
  if (TRUNCATED_MULTIPART.test(error.message)) {
    return {
      status: 400,
      body: {
        error: 'Bad Request',
        message: 'the multipart body ends before its closing boundary, or a part header is malformed',
        code: 'TRUNCATED_MULTIPART',
      },
    };
  }
  return {
    status: 500,
    body: { error: 'Internal Server Error', message: 'An unexpected error occurred; it has been logged.' },
  };
}

/** "querystring/limit must be <= 1000" names the offending parameter, as the spec asks. */
function describeValidation(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const where = error.validationContext ?? 'request';
  const params = first.params as { additionalProperty?: string; missingProperty?: string } | undefined;
  if (params?.additionalProperty) return `${where}: unknown parameter "${params.additionalProperty}"`;
  if (params?.missingProperty) return `${where}: "${params.missingProperty}" is required`;
  const field = first.instancePath.replace(/^\//, '').replaceAll('/', '.');
  return `${where}${field ? `.${field}` : ''} ${first.message ?? 'is invalid'}`;
}

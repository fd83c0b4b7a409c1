import { isDatabaseUnreachable } from '../postgres/connection-failures.ts';
import type { ErrorBodyShape } from './error-body.ts';

// Failures that come from PostgreSQL rather than from our code, recognised by their shape (SQLSTATE
// `code`, Slonik's error names) anywhere along the cause chain:
// - the database cannot be reached or went away (postgres/connection-failures.ts, the one rule the
//   replicas' fallback asks too): 503, so clients and proxies retry later;
// - a statement ran out of its budget (statement_timeout) or was cancelled, or the request ran out
//   of its own (Fastify's handlerTimeout, client-gone.ts; its statements are cancelled): 503 as well;
// - a data exception (SQLSTATE class 22: a value out of range, a NUL byte, bad text for a type)
//   can only come from a value a caller sent that a check missed: 400, never a 500.

type Classified = { status: number; body: ErrorBodyShape };

export function classifyDatabaseError(error: unknown): Classified | null {
  if (isDatabaseUnreachable(error))
    return unavailable('The database is unavailable; try again shortly.', 'DATABASE_UNAVAILABLE');
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    const text = typeof code === 'string' ? code : '';
    if (text === 'FST_ERR_HANDLER_TIMEOUT') {
      return unavailable(
        'The request ran out of its time budget; narrow it down or try again later.',
        'QUERY_TIMEOUT',
      );
    }
    if (
      text === '57014' ||
      current.name === 'StatementTimeoutError' ||
      current.name === 'StatementCancelledError'
    ) {
      return unavailable(
        'The query ran out of its time budget; narrow it down or try again later.',
        'QUERY_TIMEOUT',
      );
    }
    if (/^22[0-9A-Z]{3}$/.test(text)) {
      return {
        status: 400,
        body: {
          error: 'Bad Request',
          message: 'A value in the request is out of range or malformed.',
          code: 'INVALID_VALUE',
        },
      };
    }
    current = current.cause;
  }
  return null;
}

function unavailable(message: string, code: string): Classified {
  return { status: 503, body: { error: 'Service Unavailable', message, code } };
}

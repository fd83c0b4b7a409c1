import { BackendTerminatedError, BackendTerminatedUnexpectedlyError, ConnectionError } from 'slonik';
// Whether an error says that the database server cannot be reached or went away, as opposed to a
// query that was wrong or too slow: the one answer the HTTP error map (503 DATABASE_UNAVAILABLE) and
// the read replicas' fallback to the primary both ask. Recognised by shape anywhere along the cause
// chain (socket error codes, SQLSTATE, Slonik's error names, pg's messages), since the error may
// come wrapped by Slonik or by our own code.

const SOCKET_CODES = new Set([
  'ECONNREFUSED', // nothing listens
  'ECONNRESET', // the connection dropped
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND', // the host name does not resolve
  'EAI_AGAIN', // the resolver did not answer
]);

/** A Unix socket that is gone (the embedded cluster stopped) fails with these, on connect only. */
const SOCKET_PATH_CODES = new Set(['ENOENT', 'EACCES']);

const SERVER_STATES = new Set([
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, in recovery without hot standby)
  '53300', // too_many_connections
]);

// Slonik's own connection errors, by class: their `name` is plain 'Error', so a name check never
// matched them.
const UNREACHABLE_CLASSES = [ConnectionError, BackendTerminatedError, BackendTerminatedUnexpectedlyError];

// pg's own connect timeout (the pool's connectionTimeout: a server that accepts and never answers,
// a stopped or black-holed host) is a bare `Error('timeout expired')`, with no code: it answered
// 500 (issue 31 §4). Matched whole, so no other message that merely mentions a timeout counts.
const UNREACHABLE_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Connection terminated due to connection timeout|^timeout expired$/i;

export function isDatabaseUnreachable(error: unknown): boolean {
  for (let depth = 0, current: unknown = error; depth < 8 && current instanceof Error; depth += 1) {
    const error = current;
    const { code, syscall } = current as { code?: unknown; syscall?: unknown };
    const text = typeof code === 'string' ? code : '';
    if (
      SOCKET_CODES.has(text) ||
      (SOCKET_PATH_CODES.has(text) && syscall === 'connect') ||
      SERVER_STATES.has(text) ||
      text.startsWith('08') || // SQLSTATE class 08: connection exception
      UNREACHABLE_CLASSES.some((kind) => error instanceof kind) ||
      UNREACHABLE_MESSAGES.test(error.message)
    )
      return true;
    current = error.cause;
  }
  return false;
}

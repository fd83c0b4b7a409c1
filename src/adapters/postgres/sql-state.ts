// The SQLSTATE of a failed statement, however it reached us: node-postgres sets `code` on its
// error, and Slonik wraps that error as the `cause` of its own.

/** lock_timeout (or NOWAIT) ran out before the lock was granted. */
export const LOCK_NOT_AVAILABLE = '55P03';

/** The first SQLSTATE along the error's cause chain; undefined when there is none. */
export function sqlState(error: unknown): string | undefined {
  let current: unknown = error;
  while (current && typeof current === 'object') {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

import t from 'tap';
import {
  canRetry,
  classifyFailure,
  DEFAULT_RETRY_POLICY,
  recommendAction,
  retryRefusal,
  retryDelayMs,
} from '../../../../src/domain/ingest/failures.ts';

t.test('the default retry policy gives 30 s, 60 s, 120 s and caps at 300 s', async (t) => {
  t.same(
    [1, 2, 3, 4, 5, 6].map((attempt) => retryDelayMs(DEFAULT_RETRY_POLICY, attempt)),
    [30_000, 60_000, 120_000, 240_000, 300_000, 300_000],
  );
  t.equal(canRetry(DEFAULT_RETRY_POLICY, 0), true);
  t.equal(canRetry(DEFAULT_RETRY_POLICY, 2), true);
  t.equal(canRetry(DEFAULT_RETRY_POLICY, 3), false, 'at most 3 attempts');
  t.throws(() => retryDelayMs(DEFAULT_RETRY_POLICY, 0), RangeError);
});

t.test('a custom policy follows its multiplier and cap', async (t) => {
  const policy = { baseDelayMs: 1000, backoffMultiplier: 3, maxDelayMs: 5000, maxAttempts: 5 };
  t.same(
    [1, 2, 3].map((a) => retryDelayMs(policy, a)),
    [1000, 3000, 5000],
  );
});

t.test('transient failures are recoverable', async (t) => {
  const cases = [
    { message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED' },
    { message: 'request timed out', code: 'ETIMEDOUT' },
    { message: 'getaddrinfo EAI_AGAIN', code: 'EAI_AGAIN' },
    { message: 'deadlock detected', code: '40P01' },
    { message: 'could not serialize access', code: '40001' },
    { message: 'too many connections', code: '53300' },
    { message: 'terminating connection due to administrator command', code: '57P01' },
    { message: 'Too Many Requests', httpStatus: 429 },
    { message: 'Bad Gateway', httpStatus: 502 },
    { message: 'no space left on device', code: 'ENOSPC' },
    { message: 'The operation was aborted due to timeout' },
  ];
  for (const facts of cases) {
    const c = classifyFailure(facts);
    t.equal(c.type, 'recoverable', facts.message);
    t.equal(c.retryable, true);
  }
});

t.test('permanent failures are not retried', async (t) => {
  const cases = [
    { message: 'ENOENT: no such file', code: 'ENOENT' },
    { message: 'Unauthorized', httpStatus: 401 },
    { message: 'Forbidden', httpStatus: 403 },
    { message: 'the file is not CSV', code: 'INVALID_FORMAT' },
    { message: 'TypeError: x is not a function' },
  ];
  for (const facts of cases) {
    const c = classifyFailure(facts);
    t.equal(c.type, 'permanent', facts.message);
    t.equal(c.retryable, false);
  }
});

t.test('a declared class wins and user action is retryable once the condition changes', async (t) => {
  const c = classifyFailure({ message: 'daily import quota reached', declared: 'user_action_required' });
  t.same(c, { type: 'user_action_required', retryable: true, reason: 'daily import quota reached' });
});

t.test('recommendations: each value under its condition', async (t) => {
  const base = { retryAttempts: 0, policy: DEFAULT_RETRY_POLICY, waitingForRetry: false };
  const rec = (type: 'recoverable' | 'permanent' | 'user_action_required', extra = {}) =>
    recommendAction({
      classification: { type, retryable: type !== 'permanent', reason: '' },
      ...base,
      ...extra,
    });
  t.equal(rec('recoverable', { retryAttempts: 1, waitingForRetry: true }), 'automatic_retry');
  t.equal(rec('recoverable', { retryAttempts: 3 }), 'max_retries_exceeded');
  t.equal(rec('recoverable', { retryAttempts: 1 }), 'manual_intervention', 'failed, not scheduled again');
  t.equal(rec('permanent'), 'manual_intervention');
  t.equal(rec('user_action_required', { code: 'NO_TIMESTAMP' }), 'manual_intervention');
  t.equal(rec('user_action_required', { code: 'QUOTA_EXCEEDED' }), 'wait_for_quota_reset');
  t.equal(rec('user_action_required', { code: 'SCHEMA_DRIFT' }), 'approve_schema_changes');
  t.equal(rec('user_action_required', { code: 'NEEDS_REVIEW' }), 'approve_schema_changes');
});

t.test('a retry is refused for failures that need a user action, saying what to do', async (t) => {
  const user = { type: 'user_action_required' as const, retryable: true, reason: 'x' };
  t.match(retryRefusal({ classification: user, code: 'SCHEMA_DRIFT' }), /approve/);
  t.match(retryRefusal({ classification: user, code: 'NO_VALID_ROWS' }), /fix the file/);
  t.match(retryRefusal({ classification: user, code: 'NO_TIMESTAMP' }), /fieldMapping\.timestamp/);
  t.match(retryRefusal({ classification: user }), /user action/);
  t.match(
    retryRefusal({ classification: { type: 'permanent', retryable: false, reason: 'empty' } }),
    /permanent and needs a manual fix: empty/,
  );
  t.equal(retryRefusal({ classification: user, code: 'QUOTA_EXCEEDED' }), null, 'after the reset');
  t.equal(retryRefusal({ classification: { type: 'recoverable', retryable: true, reason: 'net' } }), null);
});

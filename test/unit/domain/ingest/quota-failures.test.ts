import t from 'tap';
import {
  classifyFailure,
  DEFAULT_RETRY_POLICY,
  recommendAction,
  retryRefusal,
} from '../../../../src/domain/ingest/failures.ts';
import { importQuotaFailure } from '../../../../src/domain/ingest/quota-failures.ts';
import { QuotaExceededError } from '../../../../src/domain/accounts/quotas.ts';

// What a job stopped by a quota is recommended: the recommendation follows from its failure alone.

function recommendationFor(error: QuotaExceededError, retryAttempts = 0) {
  const failure = importQuotaFailure(error);
  const classification = classifyFailure({
    message: failure.message,
    code: failure.code,
    declared: failure.classification,
  });
  return {
    code: failure.code,
    classification,
    action: recommendAction({
      classification,
      code: failure.code,
      retryAttempts,
      policy: DEFAULT_RETRY_POLICY,
      waitingForRetry: false,
    }),
  };
}

t.test('an import stopped by totalEvents: wait_for_quota_reset, and it may be retried', async (t) => {
  const stopped = recommendationFor(
    new QuotaExceededError('totalEvents', { limit: 10_000, used: 9_990, resetsAt: null }),
  );
  t.equal(stopped.action, 'wait_for_quota_reset');
  t.equal(stopped.code, 'QUOTA_EXCEEDED');
  t.match(stopped.classification, { type: 'user_action_required', retryable: true });
  t.equal(
    recommendationFor(new QuotaExceededError('totalEvents', { limit: 10, used: 10, resetsAt: null }), 5)
      .action,
    'wait_for_quota_reset',
    'past its automatic retries still waits for room rather than max_retries_exceeded',
  );
});

t.test('an import stopped by eventsPerImport: the user acts first, then a retry continues it', async (t) => {
  const error = new QuotaExceededError('eventsPerImport', { limit: 1_000, used: 1_000, resetsAt: null });
  const stopped = recommendationFor(error);
  t.equal(stopped.action, 'manual_intervention', 'split the file or ask for a higher level');
  t.equal(stopped.code, 'EVENTS_PER_IMPORT_EXCEEDED');
  t.match(stopped.classification, { type: 'user_action_required', retryable: true });
  t.equal(
    retryRefusal({ classification: stopped.classification, code: stopped.code }),
    null,
    'a retry is taken',
  );
  t.match(importQuotaFailure(error).message, /events before the limit were stored/);
});

import type { QuotaExceededError } from '../accounts/quotas.ts';
import { type IngestFailure, needsUser, permanent } from './failures.ts';

/**
 * An import's failure when one of its limits stopped it, after the events that fit were stored.
 * eventsPerImport is a ceiling no wait lifts (split the file or get a higher trust level): permanent,
 * so recommended `manual_intervention`. totalEvents is the account's: once there is room again (a
 * higher trust level) a retry continues where the import stopped, so `wait_for_quota_reset`.
 */
export function importQuotaFailure(error: QuotaExceededError): IngestFailure {
  const message = `${error.message}; the events before the limit were stored`;
  return error.quota === 'eventsPerImport'
    ? permanent('EVENTS_PER_IMPORT_EXCEEDED', message)
    : needsUser('QUOTA_EXCEEDED', message);
}

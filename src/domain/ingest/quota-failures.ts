import type { QuotaExceededError } from '../accounts/quotas.ts';
import { type IngestFailure, needsUser } from './failures.ts';

/**
 * An import's failure when one of its limits stopped it, after the events that fit were stored.
 * Either limit is lifted by the account's standing, not by the file: eventsPerImport by a higher
 * trust level (or a smaller file), totalEvents by a higher level too. Both need the user (or an
 * admin) to act first, and then a retry continues the same import with the rows not yet stored
 * (retryRefusal lets them through), so neither is permanent.
 */
export function importQuotaFailure(error: QuotaExceededError): IngestFailure {
  const message = `${error.message}; the events before the limit were stored`;
  return error.quota === 'eventsPerImport'
    ? needsUser('EVENTS_PER_IMPORT_EXCEEDED', message)
    : needsUser('QUOTA_EXCEEDED', message);
}

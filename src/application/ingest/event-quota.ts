import type { NewEvent } from '../../domain/read/events.ts';
import { importQuotaFailure } from '../../domain/ingest/quota-failures.ts';
import { QuotaExceededError } from '../../domain/accounts/quotas.ts';
import type { EventQuota } from '../../ports/ingest/event-batch-writer.ts';
import type { IngestFile } from '../../domain/ingest/imports.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';

// The events an import creates count against its uploader's totalEvents and the job's
// eventsPerImport (create-events, run-ingest-job.ts): the store counts them in the transaction of
// the batch that stores them and refuses a batch that would pass a limit.

/** The limits the import's events count against: its uploader's (none for a file without one). */
export async function eventQuotaOf(
  deps: { quotas: Pick<Quotas, 'limits'> },
  file: Pick<IngestFile, 'uploadedBy'>,
): Promise<EventQuota | null> {
  if (file.uploadedBy === null) return null;
  const limits = await deps.quotas.limits(file.uploadedBy);
  return {
    userId: file.uploadedBy,
    totalEvents: limits.totalEvents,
    eventsPerImport: limits.eventsPerImport,
  };
}

type Skips = { duplicates: number; invalid: number; geocoded: number };

/**
 * Stores a batch through `store`; when a limit refuses it, stores the events that still fit (up to
 * the file row of the last of them, with no skipped rows counted) and nothing past the limit, then
 * throws the import's quota failure. `rows` holds the file row of each event.
 */
export async function storeWithinQuota<T>(
  events: NewEvent[],
  rows: number[],
  row: number,
  store: (events: NewEvent[], skips: Skips | null, lastRow: number) => Promise<T>,
): Promise<T> {
  try {
    return await store(events, null, row);
  } catch (error) {
    if (!(error instanceof QuotaExceededError)) throw error;
    const fit = Math.max(0, error.limit - error.used);
    const lastRow = rows[fit - 1];
    if (fit > 0 && lastRow !== undefined) {
      await store(events.slice(0, fit), { duplicates: 0, invalid: 0, geocoded: 0 }, lastRow).catch(
        (again: unknown) => {
          // Another import of the same account took the room meanwhile: nothing more is stored.
          if (!(again instanceof QuotaExceededError)) throw again;
        },
      );
    }
    throw importQuotaFailure(error);
  }
}

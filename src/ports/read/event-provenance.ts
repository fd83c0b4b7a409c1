import type { CatalogAccessFacts, DatasetAccessFacts } from '../../domain/access.ts';
import type { EventView } from '../../domain/read/events.ts';
import type { StoredFileSource } from '../../domain/read/provenance.ts';

// One event with what is known of its making (issue 38 §5), and the facts its access is decided on
// (application/read/event-provenance.ts decides, with domain/access.ts).

export type EventRecord = {
  /** The event as /api/v1/events shows it, with `locatedBy`. */
  event: EventView & { locatedBy: unknown };
  access: { catalog: CatalogAccessFacts; dataset: DatasetAccessFacts };
  /** The dataset's setting: whether its events show their provenance. */
  provenancePublic: boolean;
  importJob: number | null;
  row: number | null;
  sheet: { index: number; name: string | null } | null;
  storedAt: string;
  changedAt: string;
  /** The record of the file its import job read (null: no job, or the job was removed). */
  file: StoredFileSource | null;
  /**
   * What a reader without write access sees when the dataset has location privacy (issue 38 §4):
   * the stored generalised location (null: suppressed) and `data` without the columns the location
   * was read from; null when the dataset has no privacy settings.
   */
  generalised: { location: EventView['location']; data: EventView['data'] } | null;
};

export interface EventProvenanceReader {
  /** The event with that id, whoever may read it (the use case decides); null when there is none. */
  eventRecord(eventId: number): Promise<EventRecord | null>;
}

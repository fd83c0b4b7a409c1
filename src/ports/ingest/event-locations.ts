import type { LocatedByGeocoder } from '../../domain/ingest/geocoding/located-by.ts';
import type { Location } from '../../domain/read/events.ts';

/** A location found after the import for an event stored without one. */
export type Placement = { uniqueId: string; location: Location; locatedBy: LocatedByGeocoder | null };

/**
 * The locations of an import's events, for the rows the geocoder could not place: which of them
 * still have none, and placing them afterwards (docs/ingestion.md, "Rows not placed").
 */
export interface EventLocations {
  /** Of these unique ids of the dataset's events, those whose event has no location. */
  unlocatedEvents(datasetId: number, uniqueIds: string[]): Promise<Set<string>>;
  /**
   * Sets each placement's location on its event when that event still has none, so a placement
   * repeated (a second post of the same fix) changes nothing. Answers how many events it set.
   */
  placeEvents(datasetId: number, placements: Placement[]): Promise<number>;
}

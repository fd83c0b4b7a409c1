import type { EventFilter, Sort } from '../../domain/read/read-query.ts';
import type { Viewer } from './event-reader.ts';
import type { PropertyField } from '../../domain/read/typed-properties.ts';

// The exports of /api/v1 (events.geojson, events.csv): the whole filtered set, as text, in batches
// read one after the other (keyset paging), so that an export of any size holds one batch in memory.

export type ExportFormat = 'geojson' | 'csv' | 'geojsonseq' | 'kml';

export type EventExport = {
  /** Text before the first batch: the FeatureCollection's opening, or the CSV header line. */
  head: string;
  /** The events as text, a batch at a time, in the sort's order (GeoJSON: features joined by `,\n`). */
  batches: AsyncIterable<string>;
  /** Text between two batches (GeoJSON: `,\n`; CSV: nothing, each line ends in CRLF). */
  separator: string;
  /** Text after the last batch. */
  tail: string;
  /** The data version the export's snapshot holds (see `versionOf`). */
  version: string;
  /** The typed properties each feature carries (an export of one dataset; GeoJSON formats only). */
  fields?: readonly PropertyField[];
};

export interface EventExporter {
  /**
   * The data version of what `viewer` may read with `filter`, now: two exports with the same filter,
   * sort and format at the same version have the same bytes.
   */
  versionOf(viewer: Viewer, filter: EventFilter): Promise<string>;
  /** Starts an export: resolves what the viewer may read and, for CSV, its columns. */
  exportEvents(viewer: Viewer, filter: EventFilter, sort: Sort, format: ExportFormat): Promise<EventExport>;
}

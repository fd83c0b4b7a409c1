import { CURSOR_SORT_FIELDS, cursorSortField } from '../../domain/read/event-cursor.ts';
import { invalid, parseEventFilter, type RawQuery } from '../../domain/read/read-query.ts';
import { parseEventSort } from '../../domain/read/sort.ts';
import type { EventExport, EventExporter, ExportFormat } from '../../ports/read/event-exporter.ts';
import type { Viewer } from '../../ports/read/event-reader.ts';

export const EXPORT_DEFAULT_SORT = 'id';

/**
 * GET /api/v1/events.geojson and /api/v1/events.csv: every event the filters of /events match (the
 * same parameters, the same visibility), in a sort keyset paging can walk (default id).
 */
export async function exportEvents(
  deps: { exporter: EventExporter },
  viewer: Viewer,
  query: RawQuery,
  format: ExportFormat,
): Promise<EventExport> {
  const filter = parseEventFilter(query);
  // By id unless asked otherwise: insertion order, which is about the table's physical order, so
  // the batches read the heap sequentially (by time, the same rows cost a random read each).
  const sort = parseEventSort(query.sort ?? EXPORT_DEFAULT_SORT);
  if (cursorSortField(sort) === null)
    throw invalid(
      'sort',
      `an export is sorted by ${CURSOR_SORT_FIELDS.join(', ')} (with - for descending), not "${sort.text}"`,
    );
  return deps.exporter.exportEvents(viewer, filter, sort, format);
}

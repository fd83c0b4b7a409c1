import { paginate, parseEventFilter, parsePage, type RawQuery } from '../domain/read-query.ts';
import { parseEventSort } from '../domain/sort.ts';
import type { EventReader, Viewer } from '../ports/event-reader.ts';

/**
 * GET /api/v1/events: one page of the filtered events and the spec's pagination object, as the
 * response's JSON text (`{"events": [...], "pagination": {...}}`; each event an EventView). The
 * events arrive as JSON from the reader; only the small pagination object is serialised here.
 */
export async function listEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
  options: { fresh?: boolean } = {},
): Promise<string> {
  const filter = parseEventFilter(query);
  const sort = parseEventSort(query.sort);
  const page = parsePage(query);
  const { eventsJson, totalDocs } = await deps.events.listEventsPage(viewer, filter, sort, page, options);
  return `{"events":${eventsJson},"pagination":${JSON.stringify(paginate(page, totalDocs))}}`;
}

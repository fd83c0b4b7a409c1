import {
  type Pagination,
  paginate,
  parseEventFilter,
  parsePage,
  parseSort,
  type RawQuery,
} from '../domain/read-query.ts';
import type { EventReader, EventView, Viewer } from '../ports/event-reader.ts';

/** GET /api/v1/events: one page of the filtered events and the spec's pagination object. */
export async function listEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<{ events: EventView[]; pagination: Pagination }> {
  const filter = parseEventFilter(query);
  const sort = parseSort(query.sort);
  const page = parsePage(query);
  const [events, totalDocs] = await Promise.all([
    deps.events.listEvents(viewer, filter, sort, page),
    deps.events.countEvents(viewer, filter),
  ]);
  return { events, pagination: paginate(page, totalDocs) };
}

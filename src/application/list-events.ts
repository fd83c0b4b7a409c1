import { paginate, parseEventFilter, parsePage, parseSort, type RawQuery } from '../domain/read-query.ts';
import type { EventReader, Viewer } from '../ports/event-reader.ts';

/**
 * GET /api/v1/events: one page of the filtered events and the spec's pagination object, as the
 * response's JSON text (`{"events": [...], "pagination": {...}}`; each event an EventView). The
 * events arrive as JSON from the reader; only the small pagination object is serialised here. The
 * data signature the page was read at comes along (the HTTP adapter makes the ETag of it).
 */
export async function listEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
  options: { fresh?: boolean } = {},
): Promise<{ json: string; signature: string | null }> {
  const filter = parseEventFilter(query);
  const sort = parseSort(query.sort);
  const page = parsePage(query);
  const { eventsJson, totalDocs, signature } = await deps.events.listEventsPage(
    viewer,
    filter,
    sort,
    page,
    options,
  );
  return {
    json: `{"events":${eventsJson},"pagination":${JSON.stringify(paginate(page, totalDocs))}}`,
    signature,
  };
}

import {
  encodeCursor,
  keysetPagination,
  parseCursor,
  positionAfter,
} from '../../domain/read/event-cursor.ts';
import {
  invalid,
  paginate,
  parseEventFilter,
  parsePage,
  type RawQuery,
} from '../../domain/read/read-query.ts';
import { parseEventSort } from '../../domain/read/sort.ts';
import { checkPageText } from '../../domain/read/page-bytes.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';
import type { EventView } from '../../domain/read/events.ts';

/**
 * GET /api/v1/events: one page of the filtered events and the spec's pagination object, as the
 * response's JSON text (`{"events": [...], "pagination": {...}, "nextCursor": ...}`; each event an
 * EventView). The events arrive as JSON from the reader; only the small pagination object is
 * serialised here. A page is asked by number (`page`) or after a position (`cursor`, keyset
 * paging: src/domain/read/event-cursor.ts); either way the answer carries the cursor of the page after
 * it. The data signature the page was read at comes along (the HTTP adapter makes the ETag of it).
 */
export async function listEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
  options: { fresh?: boolean } = {},
): Promise<{ json: string; signature: string | null }> {
  const filter = parseEventFilter(query);
  const sort = parseEventSort(query.sort);
  const after = parseCursor(query.cursor, sort);
  if (after && query.page !== undefined) throw invalid('page', 'page and cursor exclude each other');
  const page = { ...parsePage(query), ...(after ? { after } : {}) };
  const { eventsJson, totalDocs, signature } = await deps.events.listEventsPage(
    viewer,
    filter,
    sort,
    page,
    options,
  );
  // Refused rather than sent (one rule with the collection pages).
  checkPageText(eventsJson, eventCount(eventsJson), page.limit);
  const hasNextPage = after ? eventCount(eventsJson) === page.limit : paginate(page, totalDocs).hasNextPage;
  const last = hasNextPage ? lastEvent(eventsJson) : null;
  const position = last ? positionAfter(sort, last) : null;
  const nextCursor = position ? encodeCursor(sort, position) : null;
  const pagination = after ? keysetPagination(page.limit, totalDocs, hasNextPage) : paginate(page, totalDocs);
  return {
    json: `{"events":${eventsJson},"pagination":${JSON.stringify(pagination)},"nextCursor":${JSON.stringify(nextCursor)}}`,
    signature,
  };
}

// The reader writes its array as `[{"id":...},{"id":...}]`, events joined by `},{"id":` with no
// space. A `data` object is jsonb's text, which always puts a space after `,` and `:`, and strings
// escape their quotes, so that sequence marks event boundaries only. A page of 100 events is about
// 65 KB: parsing it whole on every request to find its last event would cost more than the cache hit.
const BOUNDARY = '},{"id":';

/** How many events the reader's JSON array holds, without parsing it. */
export function eventCount(eventsJson: string): number {
  return eventsJson === '[]' ? 0 : eventsJson.split(BOUNDARY).length;
}

function lastEvent(eventsJson: string): EventView | null {
  if (eventsJson === '[]') return null;
  const boundary = eventsJson.lastIndexOf(BOUNDARY);
  const start = boundary === -1 ? 1 : boundary + 2;
  try {
    return JSON.parse(eventsJson.slice(start, -1)) as EventView;
  } catch {
    return (JSON.parse(eventsJson) as EventView[]).at(-1) ?? null;
  }
}

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
import { checkPageSize } from '../../domain/read/page-bytes.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';
import type { EventView } from '../../domain/read/events.ts';

/**
 * GET /api/v1/events: one page of the filtered events and the spec's pagination object, as the
 * response's JSON text in UTF-8 (`{"events": [...], "pagination": {...}, "nextCursor": ...}`; each
 * event an EventView). The events arrive as JSON bytes from the reader; only the small pagination
 * object is serialised here, and the answer is those bytes between two small pieces. A page is asked
 * by number (`page`) or after a position (`cursor`, keyset paging: src/domain/read/event-cursor.ts);
 * either way the answer carries the cursor of the page after it. The data signature the page was
 * read at comes along (the HTTP adapter makes the ETag of it).
 */
export async function listEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
  options: { fresh?: boolean } = {},
): Promise<{ body: Buffer; signature: string | null }> {
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
  checkPageSize(eventsJson.length, () => eventCount(eventsJson), page.limit);
  const hasNextPage = after ? eventCount(eventsJson) === page.limit : paginate(page, totalDocs).hasNextPage;
  const last = hasNextPage ? lastEvent(eventsJson) : null;
  const position = last ? positionAfter(sort, last) : null;
  const nextCursor = position ? encodeCursor(sort, position) : null;
  const pagination = after ? keysetPagination(page.limit, totalDocs, hasNextPage) : paginate(page, totalDocs);
  const rest = `,"pagination":${JSON.stringify(pagination)},"nextCursor":${JSON.stringify(nextCursor)}}`;
  return { body: Buffer.concat([EVENTS_OPEN, eventsJson, Buffer.from(rest)]), signature };
}

const EVENTS_OPEN = Buffer.from('{"events":');

// The reader writes its array as `[{"id":...},{"id":...}]`, events joined by `},{"id":` with no
// space. A `data` object is jsonb's text, which always puts a space after `,` and `:`, and strings
// escape their quotes, so that sequence marks event boundaries only (in the UTF-8 bytes too: every
// byte of a multi-byte character is 0x80 or above). A page of 100 events is about 55-65 KB: parsing
// it whole on every request to find its last event would cost more than the cache hit.
const BOUNDARY = '},{"id":';

/** How many events the reader's JSON array holds, without parsing it. */
export function eventCount(eventsJson: Buffer): number {
  if (eventsJson.length <= 2) return 0;
  let count = 1;
  for (
    let at = eventsJson.indexOf(BOUNDARY);
    at !== -1;
    at = eventsJson.indexOf(BOUNDARY, at + BOUNDARY.length)
  )
    count += 1;
  return count;
}

function lastEvent(eventsJson: Buffer): EventView | null {
  if (eventsJson.length <= 2) return null;
  const boundary = eventsJson.lastIndexOf(BOUNDARY);
  const start = boundary === -1 ? 1 : boundary + 2;
  try {
    return JSON.parse(eventsJson.toString('utf8', start, eventsJson.length - 1)) as EventView;
  } catch {
    return (JSON.parse(eventsJson.toString('utf8')) as EventView[]).at(-1) ?? null;
  }
}

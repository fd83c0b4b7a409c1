import { encodeChangeCursor, parseChangeCursor } from '../../domain/read/change-cursor.ts';
import { parseEventFilter, parsePage, type RawQuery } from '../../domain/read/read-query.ts';
import type { Change, ChangeFeed } from '../../ports/read/change-feed.ts';
import type { Viewer } from '../../ports/read/event-reader.ts';

/**
 * GET /api/v1/changes (issue 39 §1): the changes to the events the viewer may read (the one access
 * rule, through the read API's scope) that the read API's filters match, in the order they were
 * stored, after `cursor`; as the response's JSON text. `nextCursor` is always given: a reader polls
 * with it and gets each change exactly once. A change shows the event as it is now; a deletion its
 * id only. A cursor before the retention horizon is a 410.
 */
export async function listChanges(
  deps: { changes: ChangeFeed },
  viewer: Viewer,
  query: RawQuery,
): Promise<string> {
  const filter = parseEventFilter(query);
  const after = parseChangeCursor(query.cursor);
  const { limit } = parsePage({ limit: query.limit });
  const page = await deps.changes.readChanges(viewer, filter, after, limit);
  const items = page.changes.map(changeItemJson);
  return `{"changes":[${items.join(',')}],"nextCursor":${JSON.stringify(encodeChangeCursor(page.next))},"hasMore":${page.hasMore}}`;
}

/** One change as the feed's item (JSON text): the one projection of /api/v1/changes and of subscription deliveries. */
export function changeItemJson(change: Change): string {
  const head = `{"cursor":${JSON.stringify(encodeChangeCursor(change.position))},"kind":"${change.kind}","eventId":${change.eventId},"storedAt":${JSON.stringify(change.storedAt)}`;
  return change.eventJson === null ? `${head}}` : `${head},"event":${change.eventJson}}`;
}

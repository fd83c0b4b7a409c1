import { parseEventFilter, parsePage, type RawQuery } from '../../src/domain/read/read-query.ts';
import { parseEventSort } from '../../src/domain/read/sort.ts';
import type { EventReader, Viewer } from '../../src/ports/read/event-reader.ts';

/** A page of /api/v1/events as the read model gives it, its events' UTF-8 bytes decoded (as a client would). */
export type TextPage = { eventsJson: string; totalDocs: number };

/** The read model's page for a raw query string, as text; `fresh` reads the database, not a stored answer. */
export async function readTextPage(
  reader: EventReader,
  query: RawQuery,
  viewer: Viewer = null,
  options: { fresh?: boolean } = {},
): Promise<TextPage> {
  const page = await reader.listEventsPage(
    viewer,
    parseEventFilter(query),
    parseEventSort(query.sort),
    parsePage(query),
    options,
  );
  return { eventsJson: page.eventsJson.toString('utf8'), totalDocs: page.totalDocs };
}

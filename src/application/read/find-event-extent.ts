import { type Bounds, parseEventFilter, type RawQuery } from '../../domain/read/read-query.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';

type EventExtent = { bounds: Bounds | null; count: number; located: number };

/**
 * GET /api/v1/events/bounds: the box around the filtered events that have a location (null when none
 * has), with the number of filtered events and of located ones, so a map can fit its view.
 */
export async function findEventExtent(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<EventExtent> {
  const extent = await deps.events.extent(viewer, parseEventFilter(query));
  return { bounds: extent.bounds, count: extent.count, located: extent.located };
}

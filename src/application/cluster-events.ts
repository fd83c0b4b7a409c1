import { clusterLevel } from '../domain/clustering.ts';
import { parseEventFilter, parseZoom, type RawQuery } from '../domain/read-query.ts';
import type { EventReader, Viewer } from '../ports/event-reader.ts';

/**
 * GET /api/v1/events/geo: map clusters computed in the database, as the response's JSON text
 * (`{"type": "FeatureCollection", "features": [...]}`). A group of one event is an `event-point`
 * (its id and title); two or more events, in one cell or at one exact location, are an
 * `event-cluster` with their ids when there are ten or fewer.
 */
export async function clusterEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<string> {
  const filter = parseEventFilter(query, { boundsRequired: true });
  const zoom = parseZoom(query.zoom);
  const features = await deps.events.clusterFeatures(viewer, filter, clusterLevel(zoom));
  return `{"type":"FeatureCollection","features":${features}}`;
}

import { clusterLevel } from '../../domain/read/clustering.ts';
import { capClusterLevel } from '../../domain/read/geo-cap.ts';
import { type Bounds, parseEventFilter, parseZoom, type RawQuery } from '../../domain/read/read-query.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';

/**
 * GET /api/v1/events/geo: map clusters computed in the database, as the response's JSON text
 * (`{"type": "FeatureCollection", "features": [...]}`). A group of one event is an `event-point`
 * (its id and title); two or more events, in one cell or at one exact location, are an
 * `event-cluster` with their ids when there are ten or fewer. `capped` says whether the box was too
 * large for the zoom's cluster level (domain/read/geo-cap.ts) and coarser clusters were given.
 */
export async function clusterEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<string> {
  const filter = parseEventFilter(query, { boundsRequired: true });
  const zoom = parseZoom(query.zoom);
  // Bounded at every zoom for any box: a box too large for the zoom's level is clustered coarser.
  const { level, capped } = capClusterLevel(clusterLevel(zoom), filter.bounds as Bounds);
  const features = await deps.events.clusterFeatures(viewer, filter, level);
  return `{"type":"FeatureCollection","capped":${capped},"features":${features}}`;
}

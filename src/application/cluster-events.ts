import { clusterLevel } from '../domain/clustering.ts';
import { parseEventFilter, parseZoom, type RawQuery } from '../domain/read-query.ts';
import type { EventReader, Viewer } from '../ports/event-reader.ts';

export type GeoFeature = {
  type: 'Feature';
  geometry: { type: 'Point'; coordinates: [number, number] };
  properties: {
    id: number | string;
    type: 'event-cluster' | 'event-point';
    count?: number;
    title?: string;
    eventIds?: number[];
  };
};

export type FeatureCollection = { type: 'FeatureCollection'; features: GeoFeature[] };

/**
 * GET /api/v1/events/geo: map clusters computed in the database. A group of one event is an
 * `event-point` (its id and title); two or more events, in one cell or at one exact location, are an
 * `event-cluster` with their ids when there are ten or fewer.
 */
export async function clusterEvents(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<FeatureCollection> {
  const filter = parseEventFilter(query, { boundsRequired: true });
  const zoom = parseZoom(query.zoom);
  const clusters = await deps.events.clusters(viewer, filter, clusterLevel(zoom));
  const features = clusters.map((cluster): GeoFeature => {
    const geometry = {
      type: 'Point' as const,
      coordinates: [cluster.longitude, cluster.latitude] as [number, number],
    };
    const onlyId = cluster.eventIds?.[0];
    if (cluster.count === 1 && onlyId !== undefined) {
      return {
        type: 'Feature',
        geometry,
        properties: { id: onlyId, type: 'event-point', title: cluster.title ?? '' },
      };
    }
    return {
      type: 'Feature',
      geometry,
      properties: {
        id: `cluster:${cluster.key}`,
        type: 'event-cluster',
        count: cluster.count,
        ...(cluster.eventIds ? { eventIds: cluster.eventIds } : {}),
      },
    };
  });
  return { type: 'FeatureCollection', features };
}

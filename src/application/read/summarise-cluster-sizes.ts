import { clusterLevel } from '../../domain/read/clustering.ts';
import { type Bounds, parseEventFilter, parseZoom, type RawQuery } from '../../domain/read/read-query.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';

const WORLD: Bounds = { north: 90, south: -90, east: 180, west: -180 };
const FRACTIONS = [0.2, 0.4, 0.6, 0.8, 1];

type ClusterSizeStats = { p20: number; p40: number; p60: number; p80: number; p100: number };

/**
 * GET /api/v1/events/geo/stats: breakpoints of the cluster sizes that /events/geo gives for the same
 * filters and zoom (default 10, world bounds when none are given), for a map legend. All zero when
 * nothing matches.
 */
export async function summariseClusterSizes(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<ClusterSizeStats> {
  const parsed = parseEventFilter(query);
  const filter = { ...parsed, bounds: parsed.bounds ?? WORLD };
  const zoom = parseZoom(query.zoom);
  const values =
    (await deps.events.clusterSizePercentiles(viewer, filter, clusterLevel(zoom), FRACTIONS)) ?? [];
  const at = (index: number) => values[index] ?? 0;
  return { p20: at(0), p40: at(1), p60: at(2), p80: at(3), p100: at(4) };
}

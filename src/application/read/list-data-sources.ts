import type { DataSource, EventReader, Viewer } from '../../ports/read/event-reader.ts';

/** GET /api/v1/data-sources: visible catalogs with their datasets and event counts, for a map's filter panel. */
export async function listDataSources(
  deps: { events: EventReader },
  viewer: Viewer,
): Promise<{ catalogs: DataSource[]; totalEvents: number }> {
  const catalogs = await deps.events.dataSources(viewer);
  return { catalogs, totalEvents: catalogs.reduce((sum, catalog) => sum + catalog.eventCount, 0) };
}

import { parseEventFilter } from '../../domain/read/read-query.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';

type SourceStats = {
  catalogCounts: Record<string, number>;
  datasetCounts: Record<string, number>;
  totalEvents: number;
};

/** GET /api/v1/sources/stats: event counts of every visible catalog and dataset. */
export async function summariseSources(deps: { events: EventReader }, viewer: Viewer): Promise<SourceStats> {
  const perDataset = await deps.events.countByDataset(viewer, parseEventFilter({}));
  const catalogCounts: Record<string, number> = {};
  const datasetCounts: Record<string, number> = {};
  let totalEvents = 0;
  for (const item of perDataset) {
    datasetCounts[String(item.datasetId)] = item.count;
    catalogCounts[String(item.catalogId)] = (catalogCounts[String(item.catalogId)] ?? 0) + item.count;
    totalEvents += item.count;
  }
  return { catalogCounts, datasetCounts, totalEvents };
}

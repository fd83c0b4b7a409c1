import { type GroupBy, parseEventFilter, parseGroupBy, type RawQuery } from '../../domain/read/read-query.ts';
import type { EventReader, Viewer } from '../../ports/read/event-reader.ts';

type EventStats = {
  items: Array<{ id: number; name: string; count: number }>;
  total: number;
  groupedBy: GroupBy;
};

/** GET /api/v1/events/stats: matching events per catalog or per dataset, largest first. */
export async function countEventsBySource(
  deps: { events: EventReader },
  viewer: Viewer,
  query: RawQuery,
): Promise<EventStats> {
  const groupBy = parseGroupBy(query.groupBy);
  const filter = parseEventFilter(query);
  const perDataset = await deps.events.countByDataset(viewer, filter);
  const groups = new Map<number, { id: number; name: string; count: number }>();
  for (const item of perDataset) {
    const id = groupBy === 'dataset' ? item.datasetId : item.catalogId;
    const name = groupBy === 'dataset' ? item.datasetTitle : item.catalogTitle;
    const group = groups.get(id) ?? { id, name, count: 0 };
    group.count += item.count;
    groups.set(id, group);
  }
  const items = [...groups.values()].sort((a, b) => b.count - a.count || a.id - b.id);
  return { items, total: items.reduce((sum, item) => sum + item.count, 0), groupedBy: groupBy };
}

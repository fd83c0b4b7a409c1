import type { EventReader } from '../../../ports/read/event-reader.ts';
import type { TileReader } from '../../../ports/read/tile-reader.ts';
import type { DatabasePool } from '../database.ts';
import { clusterReads } from './clusters.ts';
import { countReads } from './counts.ts';
import { datasetExtentReads } from './dataset-extents.ts';
import { eventByIdReads } from './event-by-id.ts';
import { extentReads } from './extent.ts';
import { histogramReads } from './histogram.ts';
import { ogcFilteredReads } from './ogc-filtered.ts';
import { type PageCache, pageCache } from './page-cache.ts';

export { type PageCache, pageCache };
export { EXPORT_SNAPSHOTS, postgresEventExporter } from './export.ts';
export { postgresEventProvenance } from './event-provenance.ts';
export { CSV_KEYS_STATEMENT_TIMEOUT_MS as LONGEST_READ_STATEMENT_MS } from './export-columns.ts';
import { pageReads } from './page.ts';
import { scopeResolver } from './scope.ts';
import { sourceReads } from './sources.ts';
import { tileReads } from './tiles.ts';
import { timeRangeReads } from './time-range.ts';

// The read model of /api/v1 on PostgreSQL + PostGIS (tables and triggers in
// migrations/0200_read_api.sql), the EventReader port's implementation. Which precomputed counts
// answer a view is the pure policy of src/adapters/postgres/read/answer-path.ts; the files here turn its answers
// into SQL:
// - scope.ts: which datasets a viewer and filter read, remembered and verified for the page;
// - parts.ts (with fine-cells.ts and rows.ts): the counting parts whose union is the filtered events;
// - page.ts and page-cache.ts: the /events page, its total and the verified answer cache;
// - counts.ts, clusters.ts, histogram.ts, time-range.ts, extent.ts, sources.ts, event-by-id.ts,
//   dataset-extents.ts: the other reads (the last two for /ogc); ogc-filtered.ts (with cql-sql.ts):
//   /ogc's typed fields and CQL2-filtered pages;
// - tiles.ts: the vector tiles (the TileReader port), clusters.ts's groups cut into tiles.

type EventReaderOptions = {
  /**
   * Unfiltered map views at zoom 9-13 read event_fine_cell_counts when it holds at least this many
   * events per row on average (PostgreSQL's table statistics, read at most once a minute; default
   * FINE_CELLS_MIN_DENSITY of src/domain/read/fine-cells.ts). 0: always (tests).
   */
  fineCellsMinDensity?: number;
  /**
   * Bytes of /events answers this process keeps (page-cache.ts: each served again only after a
   * round trip shows that nothing it read has changed); 0 or unset: no cache.
   */
  pageCacheBytes?: number;
  /** A cache of one's own instead (tests read its usage). */
  pageCache?: PageCache;
  /**
   * A pool whose sessions always use generic plans (createDatabasePool's `genericPlans`), for the
   * /events page statements whose generic plan is as good as a custom one (ScopeFacts.largeShare):
   * planned once per connection instead of once per page. Unset: every page on `pool`.
   */
  genericPlanPool?: DatabasePool;
  /** Exact locations a vector tile holds at most before it is clustered (TILE_MAX_POINTS; tests lower it). */
  tileMaxPoints?: number;
};

export function postgresEventReader(
  pool: DatabasePool,
  options: EventReaderOptions = {},
): EventReader & TileReader {
  const scopes = scopeResolver(pool, { fineCellsMinDensity: options.fineCellsMinDensity });
  const cache: PageCache | null =
    options.pageCache ?? (options.pageCacheBytes ? pageCache(pool, options.pageCacheBytes) : null);
  return {
    ...pageReads(pool, scopes, { cache, genericPlanPool: options.genericPlanPool }),
    ...countReads(pool, scopes),
    ...clusterReads(pool, scopes),
    ...timeRangeReads(pool, scopes),
    ...histogramReads(pool, scopes),
    ...extentReads(pool, scopes),
    ...sourceReads(pool),
    ...tileReads(pool, scopes, { maxPoints: options.tileMaxPoints }),
    ...eventByIdReads(pool),
    ...datasetExtentReads(pool),
    ...ogcFilteredReads(pool),
  };
}
export { postgresChangeFeed } from './changes.ts';
export { postgresExportJobStore } from './export-jobs.ts';

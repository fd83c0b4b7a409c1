import {
  COARSE_LEVEL,
  FINE_LEVEL,
  GRID_LEVEL,
  gridRange,
  innerCellRange,
  mercatorShare,
  ROLLUP_LEVEL,
} from '../../../domain/read/clustering.ts';
import type { Granularity } from '../../../domain/read/histogram.ts';
import {
  type Bounds,
  type EventFilter,
  longitudeRanges,
  type Sort,
} from '../../../domain/read/read-query.ts';
import type { Grain } from '../../../domain/read/time-ranges.ts';

// The answer-path policy of the read model: which precomputed counts (or which plan) answer a view.
// The tables are those of migrations/0200_read_api.sql and later: event_counts (per dataset, catalog
// and in total, per UTC year/month/day), event_cell_counts (level-10 cells per year/month, and of
// all time for the totals and each catalog, 0963),
// event_cell_day_counts (level-10 cells per day, totals only), event_fine_cell_counts (level-16
// cells, totals only). Whatever a path reads, the adapter adds the raw rows of what the counts do
// not cover (partial periods, edge cells), so every path gives the same answer: the choice is
// only about speed. Pure: the adapter (src/adapters/postgres/read/) resolves the facts and
// turns the chosen path into SQL.

/** What the read model knows of a query's datasets and of its tables, enough to choose a path. */
export type ScopeFacts = {
  /** Every dataset with nothing hidden from the viewer: the totals rows (dataset_id 0) answer. */
  allDatasets: boolean;
  /** One whole catalog with nothing hidden from the viewer: its rows (dataset_id -<catalog id>) answer. */
  wholeCatalog: boolean;
  /**
   * A dataset in the scope has its counts pending (a bulk import's, migration 0330): the count
   * tables hold none of its events, so every part is read from the rows.
   */
  countsPending: boolean;
  /**
   * Unfiltered (and nothing hidden), and the level-16 cell counts hold enough events per row to be
   * cheaper than the rows they stand for (fineCellsPayOff, src/domain/read/fine-cells.ts).
   */
  fineCells: boolean;
  /**
   * Every dataset with nothing hidden (event_cell_day_counts holds the totals only), and the day
   * cells kept (migration 0970: the adapter adds their mode to what the scope allows).
   */
  dayCells: boolean;
  /**
   * The scope holds a large share of all events (everything, or a whole catalog holding at least
   * GENERIC_PAGE_MIN_SHARE of them; counts not pending), so an index walked in its own order meets
   * the scope's events early: the /events page statement's generic plan is as good as a custom one
   * whatever the values (pageAnswer), and an extent's edges are the first events from each side of
   * the spatial index (extentAnswer).
   */
  largeShare: boolean;
};

/**
 * A whole catalog whose share of all events is at least this has its /events pages read with the
 * generic plan. A page reads the newest entries of the time index and keeps the catalog's (as
 * custom plans do for the benchmark's catalogs of 13 % to 65 %), reading about 1 / share entries per
 * event of the page; for a small catalog a custom plan reads the catalog's index instead.
 */
export const GENERIC_PAGE_MIN_SHARE = 0.1;

/** The scope row as the database resolved it (see scope.ts in the adapter). */
type ResolvedScope = {
  /** Datasets the filter names that the viewer may not read. */
  hidden: number;
  /** The filter's catalog id when it names exactly one, else null. */
  catalogId: number | null;
  /** Whether a readable dataset of the filter has its counts pending. */
  pending: boolean;
  /** For a filter that is one catalog: its share of all events (1 unfiltered, 0 otherwise). */
  share: number;
  /**
   * A readable dataset of the filter has location privacy and the viewer may not write it: its
   * count tables were built on exact points, so every part is read from the rows, where it is
   * generalised (private-locations.ts). Datasets without privacy keep their paths.
   */
  generalised?: boolean;
};

/**
 * The facts of a resolved scope. With no filter and nothing hidden, every dataset: the totals
 * rows answer. A filter that is one whole catalog with nothing hidden reads the catalog's rows
 * (wholeCatalog). `fineCells` and `dayCells` here say only that the scope allows them: the adapter
 * then asks the tables' modes and statistics (fineCellsPayOff), at most once a minute.
 */
export function scopeFacts(
  resolved: ResolvedScope,
  filter: Pick<EventFilter, 'catalog' | 'datasets'>,
): ScopeFacts {
  const unfiltered = !filter.catalog && filter.datasets.length === 0;
  const countsPending = resolved.pending || resolved.generalised === true;
  if (resolved.hidden === 0 && unfiltered && resolved.generalised !== true)
    return {
      allDatasets: true,
      wholeCatalog: false,
      fineCells: !countsPending,
      dayCells: true,
      countsPending,
      largeShare: !countsPending,
    };
  const wholeCatalog =
    resolved.hidden === 0 &&
    filter.catalog !== null &&
    filter.datasets.length === 0 &&
    resolved.catalogId !== null;
  return {
    allDatasets: false,
    wholeCatalog,
    fineCells: false,
    dayCells: false,
    countsPending,
    largeShare: wholeCatalog && !countsPending && resolved.share >= GENERIC_PAGE_MIN_SHARE,
  };
}

/**
 * What a count is asked for: `level`, cells of that grid level; `histogram`, a time column fine
 * enough for the bins ('day' when each bin is made of whole UTC days, 'month' when of whole
 * months, null when only rows will do); `perDataset`, a breakdown by dataset; `cutMonths`, with
 * histogram 'day', that the months a bin boundary falls inside are known.
 */
export type CountNeed = {
  level?: number;
  histogram?: 'day' | 'month' | null;
  perDataset?: boolean;
  cutMonths?: boolean;
};

/** Which precomputed counts answer a count (the rows supply the rest of each path). */
type CountAnswer =
  /** The rows only. */
  | { kind: 'rows' }
  /** No bounds: whole periods of these grains from event_counts, the partial days from the rows. */
  | { kind: 'period-counts'; grains: Grain[] }
  /** Most of the world: the count without bounds minus the events outside the box. */
  | { kind: 'world-minus-outside' }
  /**
   * Bounds: the level-10 cells wholly inside the box from event_cell_counts in these grains, with
   * `dayCells` the whole days at the ends of the range (and with `cutMonths` the months a histogram
   * bin boundary cuts) from event_cell_day_counts; the edge cells from the rows. `allTime`: an
   * undated count, whose inner cells are its scope's all-time rows (readsAllTimeCells).
   * `coarse`: the inner level-6 cells from event_coarse_cell_counts, the level-10 cells around them
   * from event_cell_counts (readsCoarseCells).
   */
  | {
      kind: 'level-10-cells';
      grains: Grain[];
      dayCells: boolean;
      cutMonths: boolean;
      allTime: boolean;
      coarse: boolean;
    }
  /** A map view at zoom 9-13: the level-16 cells wholly inside from event_fine_cell_counts. */
  | { kind: 'level-16-cells'; level: number };

/**
 * Boxes covering at least this share of the world map (the whole world at zoom 0-2, the Explore
 * page's first view, such as west -170 east 170) are counted as every event minus those outside
 * the box, which are fewer than those inside.
 */
const MOSTLY_WORLD = 0.5;

export function coversMostOfWorld(bounds: Bounds | null): boolean {
  return bounds !== null && mercatorShare(bounds) >= MOSTLY_WORLD;
}

/** event_cell_day_counts holds the totals over all datasets only, and is read only while kept. */
export function readsDayCells(scope: ScopeFacts, perDataset: boolean): boolean {
  return scope.dayCells && !perDataset;
}

/**
 * Whether a count with bounds reads whole years from the level-10 year rows of event_cell_counts:
 * only the totals' (a view of everything), which the count model keeps. Any other scope sums its
 * datasets' month rows for whole years too (cellPeriodConditions in parts.ts): the catalogs' and
 * datasets' year rows are to stop being written (docs/scaling.md, "The count model that does not
 * outgrow the events", step 2). So a dated view of a whole catalog at zoom 0-4 reads its level-6
 * months (readsCoarseCells), not its level-6 years.
 */
export function readsYearCells(scope: ScopeFacts, perDataset: boolean): boolean {
  return scope.allDatasets && !perDataset;
}

/**
 * Whether a count with bounds reads the all-time cells (grain 'a' of event_cell_counts): undated,
 * whatever the scope. Migration 0963 keeps them for the totals and each catalog, 0966 for each
 * dataset: one row per cell where the year rows are one per cell and year (a Europe box of
 * real-shaped data: 7,034 rows of the totals against 30,813; 301,886 dataset cells against 636,215
 * dataset year rows on 1M real-shaped events in 20 datasets).
 */
export function readsAllTimeCells(filter: EventFilter): boolean {
  return filter.dates.from === null && filter.dates.to === null;
}

/**
 * Whether map cells at a level read the level-6 cell counts (event_coarse_cell_counts, migration
 * 0963) for the level-6 cells wholly inside the box: levels up to COARSE_LEVEL (zoom 0-4), whose
 * cells nest in the level-6 ones, of the totals or a whole catalog (the only rows it keeps). A dated
 * continent-sized view of real-shaped data read 80,000-130,000 level-10 month rows a year; its
 * level-6 rows are about 7,000.
 */
export function readsCoarseCells(scope: ScopeFacts, level: number | null, perDataset: boolean): boolean {
  return level !== null && level <= COARSE_LEVEL && (scope.allDatasets || scope.wholeCatalog) && !perDataset;
}

/**
 * Whether a map view at a level reads event_fine_cell_counts: unfiltered views at levels finer than
 * the level-10 counts up to its own (zoom 9-13), no filter of any kind, when the table pays.
 */
export function readsFineCells(scope: ScopeFacts, filter: EventFilter, level: number): boolean {
  return (
    scope.fineCells &&
    filter.bounds !== null &&
    filter.dateField.kind === 'eventTimestamp' &&
    filter.dates.from === null &&
    filter.dates.to === null &&
    level > ROLLUP_LEVEL &&
    level <= FINE_LEVEL
  );
}

/** The counting path of a view (counts, map cells, histograms, extents). */
export function countAnswer(scope: ScopeFacts, filter: EventFilter, need: CountNeed = {}): CountAnswer {
  const level = need.level ?? null;
  const perDataset = need.perDataset ?? false;
  // A custom date field is not in any count table; pending counts hold nothing yet.
  if (scope.countsPending || filter.dateField.kind !== 'eventTimestamp' || need.histogram === null)
    return { kind: 'rows' };
  if (filter.bounds === null) {
    if (level !== null) return { kind: 'rows' };
    const grains: Grain[] =
      need.histogram === 'day'
        ? ['day']
        : need.histogram === 'month'
          ? ['month', 'day']
          : ['year', 'month', 'day'];
    return { kind: 'period-counts', grains };
  }
  if (level === null && coversMostOfWorld(filter.bounds)) return { kind: 'world-minus-outside' };
  const dayCells = readsDayCells(scope, perDataset);
  // Calendar months: whole months of the inner cells from their month counts. Finer bins: the
  // months no bin boundary cuts from the month counts, the others from the day counts (unfiltered
  // views only); else the rows.
  if (need.histogram === 'month')
    return {
      kind: 'level-10-cells',
      grains: ['month'],
      dayCells,
      cutMonths: false,
      allTime: false,
      coarse: false,
    };
  if (need.histogram) {
    return need.cutMonths && dayCells
      ? {
          kind: 'level-10-cells',
          grains: ['month'],
          dayCells,
          cutMonths: true,
          allTime: false,
          coarse: false,
        }
      : { kind: 'rows' };
  }
  if (level !== null && level > ROLLUP_LEVEL)
    return readsFineCells(scope, filter, level) ? { kind: 'level-16-cells', level } : { kind: 'rows' };
  return {
    kind: 'level-10-cells',
    grains: readsYearCells(scope, perDataset) ? ['year', 'month'] : ['month'],
    dayCells,
    cutMonths: false,
    allTime: readsAllTimeCells(filter),
    coarse: readsCoarseCells(scope, level, perDataset),
  };
}

/**
 * The period a histogram's counts may be binned by: only when every bin is made of whole periods
 * ('month' for calendar months, 'day' for whole UTC days), else null (the rows).
 */
export function histogramGrain(
  bins:
    | { kind: 'fixed'; originSeconds: number; sizeSeconds: number }
    | { kind: 'calendar'; granularity: Granularity },
): 'day' | 'month' | null {
  if (bins.kind === 'calendar') return bins.granularity === 'month' ? 'month' : 'day';
  return bins.sizeSeconds % 86_400 === 0 && bins.originSeconds % 86_400 === 0 ? 'day' : null;
}

/** How the first and last instants of a view are found. */
type TimeRangeAnswer =
  | { kind: 'rows' }
  /** A box (not most of the world): first and last periods of its inner level-10 cells. */
  | { kind: 'box-cell-periods'; grain: Grain }
  /** No bounds: the first and last days from event_counts, the instants from those days' rows. */
  | { kind: 'day-counts' };

export function timeRangeAnswer(scope: ScopeFacts, filter: EventFilter): TimeRangeAnswer {
  if (scope.countsPending) return { kind: 'rows' };
  if (filter.dateField.kind !== 'eventTimestamp') return { kind: 'rows' };
  if (filter.bounds && !coversMostOfWorld(filter.bounds))
    return { kind: 'box-cell-periods', grain: readsDayCells(scope, false) ? 'day' : 'month' };
  if (filter.bounds !== null) return { kind: 'rows' };
  return { kind: 'day-counts' };
}

/** How the bounding box of a view's located events is found. */
type ExtentAnswer =
  /** The view's rows. */
  | { kind: 'rows' }
  /**
   * Everything or a large catalog, without bounds or dates: each edge from the located events
   * nearest to a line beyond that side of the map (a nearest-neighbour scan of the spatial index,
   * which meets the scope's events early), the located count as the count less the unlocated
   * events (their partial index).
   */
  | { kind: 'nearest-to-edges' };

export function extentAnswer(scope: ScopeFacts, filter: EventFilter): ExtentAnswer {
  const undated = filter.dates.from === null && filter.dates.to === null;
  if (scope.countsPending || filter.bounds !== null || !undated) return { kind: 'rows' };
  return scope.largeShare ? { kind: 'nearest-to-edges' } : { kind: 'rows' };
}

/** How an /events page and its total are read. */
type PageAnswer =
  /** A small box: one pass over the box's entries of the covering index gives total and page. */
  | { kind: 'box-rows' }
  /**
   * No bounds, the event's timestamp: the page and its total (from the counts) in one prepared
   * statement, on the generic-plan pool when `genericPlan`.
   */
  | { kind: 'one-statement'; genericPlan: boolean }
  /** Otherwise the page and a total that reads rows, side by side on two connections. */
  | { kind: 'page-beside-total' };

export function pageAnswer(scope: ScopeFacts, filter: EventFilter, sort: Sort): PageAnswer {
  if (boxRowsAnswer(filter, sort)) return { kind: 'box-rows' };
  if (filter.bounds === null && filter.dateField.kind === 'eventTimestamp')
    return { kind: 'one-statement', genericPlan: genericPlanPage(scope, filter, sort) };
  return { kind: 'page-beside-total' };
}

/**
 * Whether the /events page statement (without bounds) may run with its generic plan: sorted by time
 * (the time index gives the order), over everything or a large catalog (ScopeFacts.largeShare), so
 * that whatever the window and page the generic plan reads what a custom one would: the newest
 * entries of the time index within the window, and the counts and partial days of the total through
 * their keys. Other filters (datasets, what a viewer may not see, small catalogs) and sorts keep
 * custom plans: their best index depends on how many events the filter holds.
 */
function genericPlanPage(scope: ScopeFacts, filter: EventFilter, sort: Sort): boolean {
  return (
    scope.largeShare && filter.dateField.kind === 'eventTimestamp' && sort.key.field === 'eventTimestamp'
  );
}

/**
 * Whether a page and its total are best read together from the box's rows: bounds in which the
 * level-10 cells wholly inside cover at most half of the cells the box touches (a map view at zoom
 * 10 or closer), so that the counts would answer little and the edge rows most of the total; the
 * event's own timestamp (in the covering index); a sort by columns of the covering index.
 */
function boxRowsAnswer(filter: EventFilter, sort: Sort): boolean {
  if (filter.bounds === null || filter.dateField.kind !== 'eventTimestamp') return false;
  if (!['id', 'eventTimestamp', 'dataset'].includes(sort.key.field)) return false;
  const shift = GRID_LEVEL - ROLLUP_LEVEL;
  let touched = 0;
  let inside = 0;
  for (const range of longitudeRanges(filter.bounds)) {
    const box = { north: filter.bounds.north, south: filter.bounds.south, ...range };
    const grid = gridRange(box);
    touched += ((grid.x1 >> shift) - (grid.x0 >> shift) + 1) * ((grid.y1 >> shift) - (grid.y0 >> shift) + 1);
    const inner = innerCellRange(box, ROLLUP_LEVEL);
    if (inner) inside += (inner.x1 - inner.x0 + 1) * (inner.y1 - inner.y0 + 1);
  }
  return inside * 2 <= touched;
}

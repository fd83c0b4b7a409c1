import { type Static, Type } from 'typebox';
import {
  cellBounds,
  FINE_LEVEL,
  GRID_LEVEL,
  gridRange,
  innerCellRange,
  MAX_EVENT_IDS,
  mercatorCell,
  mercatorShare,
  ROLLUP_LEVEL,
} from '../../domain/clustering.ts';
import { type EventFilter, longitudeRanges, type Sort } from '../../domain/read-query.ts';
import {
  floorPeriod,
  type Grain,
  nextPeriod,
  type PeriodSpan,
  splitRange,
} from '../../domain/time-ranges.ts';
import type { EventReader, Viewer } from '../../ports/event-reader.ts';
import { datasetVisibility } from '../../domain/access.ts';
import { type DatabasePool, prepared, row, sql } from './database.ts';
import { joinSql, type Sql, sqlText, typed } from './sql-text.ts';
import { type CachedPage, dataSignature, type PageCache, pageCache } from './page-cache.ts';
import { visibleDatasetCondition } from './visibility.ts';

// The read model of /api/v1 on PostgreSQL + PostGIS (tables and triggers in
// migrations/0200_read_api.sql).
//
// Counting is split into "parts" whose union is exactly the filtered events:
// - precomputed rows (event_counts per dataset and UTC year/month/day; event_cell_counts per
//   dataset, UTC year/month and level-10 cell) for the whole periods and cells the filter covers, and
// - raw event rows for the rest (partial days or months at the ends of a date range, cells only
//   partly inside the bounds).
// Each part yields (dataset_id, catalog_id, t, cx, cy, n, slon, slat); callers group as they need.

type Fragment = Sql;

/**
 * Which datasets a query may read: null means every dataset, with no condition at all; otherwise
 * an `array(select ...)` of their ids, resolved inside the query itself (no extra round trip).
 */
type Scope = {
  datasetIds: Fragment | null;
  /** Set when the filter is exactly one catalog: its id, for the per-catalog total rows. */
  catalogId: Fragment | null;
  /**
   * Unfiltered (and nothing hidden), and the level-16 cell counts hold enough events per row to
   * be cheaper than the rows they stand for (see fineCellsMinDensity).
   */
  fineCells: boolean;
  /**
   * A dataset in the scope has its counts pending (a bulk import's, migration 0330): the count
   * tables hold none of its events, so every part is read from the rows.
   */
  countsPending: boolean;
  /**
   * The /events page statement's generic plan is as good as a custom one whatever the values (see
   * genericPlanPage): nothing but the time index or, for a large catalog, what a custom plan picks too.
   */
  genericPage: boolean;
};

export type EventReaderOptions = {
  /**
   * Unfiltered map views at zoom 9-13 read event_fine_cell_counts when it holds at least this many
   * events per row on average (PostgreSQL's table statistics, read at most once a minute); below,
   * a view's rows are about as many as its cell rows and cheaper to read. 0: always (tests). Since
   * the table is kept in key order (migration 0236), two events per row (1M benchmark events) pay:
   * zoom 10 views took half the time of the rows, zoom 12 about the same.
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
   * /events page statements whose generic plan is as good as a custom one (Scope.genericPage):
   * planned once per connection instead of once per page. Unset: every page on `pool`.
   */
  genericPlanPool?: DatabasePool;
};

/**
 * A whole catalog whose share of all events is at least this has its /events pages read with the
 * generic plan. A page reads the newest entries of the time index and keeps the catalog's (as
 * custom plans do for the benchmark's catalogs of 13 % to 65 %), reading about 1 / share entries per
 * event of the page; for a small catalog a custom plan reads the catalog's index instead.
 */
const GENERIC_PAGE_MIN_SHARE = 0.1;

const DensityRow = row(Type.Object({ density: Type.Number() }));

/**
 * What a viewer may see, as a condition on `datasets d` joined to `catalogs c`; null when the viewer
 * may see everything (admins), so their queries carry no condition at all. The rule is the one of
 * src/domain/access.ts, shared with the collections API and the dashboard.
 */
function visibility(viewer: Viewer): Fragment | null {
  if (datasetVisibility(viewer).kind === 'all') return null;
  return sqlText`${visibleDatasetCondition(viewer, { dataset: 'd', catalog: 'c' })}`;
}

const Signature = Type.Union([Type.String(), Type.Null()]);
const PageRow = row(
  Type.Object({ events: Type.String(), total: Type.Number(), scope: Signature, data: Type.String() }),
);
const EventsRow = row(Type.Object({ events: Type.String(), scope: Signature, data: Type.String() }));
const CountRow = row(Type.Object({ count: Type.Number() }));
const CheckedCountRow = row(Type.Object({ count: Type.Number(), scope: Signature, data: Type.String() }));
const DatasetCountRow = row(
  Type.Object({
    dataset_id: Type.Number(),
    dataset_title: Type.String(),
    catalog_id: Type.Number(),
    catalog_title: Type.String(),
    count: Type.Number(),
  }),
);
const FeaturesRow = row(Type.Object({ features: Type.String() }));
const PercentilesRow = row(Type.Object({ values: Type.Union([Type.Array(Type.Number()), Type.Null()]) }));
const RangeRow = row(
  Type.Object({
    min: Type.Union([Type.String(), Type.Null()]),
    max: Type.Union([Type.String(), Type.Null()]),
  }),
);
const BinRow = row(Type.Object({ bin: Type.Number(), count: Type.Number() }));
const ExtentRow = row(
  Type.Object({
    located: Type.Number(),
    west: Type.Union([Type.Number(), Type.Null()]),
    east: Type.Union([Type.Number(), Type.Null()]),
    south: Type.Union([Type.Number(), Type.Null()]),
    north: Type.Union([Type.Number(), Type.Null()]),
  }),
);
const SourceRow = row(
  Type.Object({
    catalog_id: Type.Number(),
    catalog_slug: Type.String(),
    catalog_title: Type.String(),
    catalog_description: Type.Union([Type.String(), Type.Null()]),
    dataset_id: Type.Union([Type.Number(), Type.Null()]),
    dataset_slug: Type.Union([Type.String(), Type.Null()]),
    dataset_title: Type.Union([Type.String(), Type.Null()]),
    dataset_description: Type.Union([Type.String(), Type.Null()]),
    date_fields: Type.Union([Type.Array(Type.String()), Type.Null()]),
    count: Type.Number(),
  }),
);
const DatasetRow = row(
  Type.Object({
    id: Type.Number(),
    slug: Type.String(),
    title: Type.String(),
    date_fields: Type.Array(Type.String()),
    total: Type.Number(),
  }),
);
const DataRow = row(Type.Object({ data: Type.Record(Type.String(), Type.Unknown()) }));

const ScopeRecord = Type.Object({
  ids: Type.Array(Type.Number()),
  hidden: Type.Number(),
  catalog_id: Type.Union([Type.Number(), Type.Null()]),
  /** Whether a readable dataset of the filter has its counts pending (migration 0330). */
  pending: Type.Boolean(),
  /**
   * chronomap_read_scope_version (migration 0230) in the same snapshot, as text: while a page's
   * statement reads the same, no dataset or catalog changed since and this row still holds.
   */
  signature: Type.String(),
  /**
   * For a filter that is one catalog: its share of all events (their year counts; 1 when unfiltered,
   * 0 otherwise). Only chooses a plan, so that it may be as old as the row.
   */
  share: Type.Number(),
});
type ScopeRecord = Static<typeof ScopeRecord>;
const ScopeRow = row(ScopeRecord);

const SCOPE_VERSION = sqlText`(select version::text from chronomap_read_scope_version)`;

/**
 * The event count of `datasets d`: the sum of its year counts, or its rows while its counts are
 * pending (a bulk import's, migration 0330: the counts hold none of its events then).
 */
const DATASET_TOTAL = sqlText`(case when d.counts_pending
  then (select count(*) from events e where e.dataset_id = d.id)
  else coalesce((select sum(event_count) from event_counts k where k.grain = 'y' and k.dataset_id = d.id), 0)
  end)::int8`;

function scopeKey(viewer: Viewer, filter: Pick<EventFilter, 'catalog' | 'datasets'>): string {
  return JSON.stringify([viewer?.id ?? null, viewer?.role ?? null, filter.catalog, filter.datasets]);
}

/**
 * One row over the datasets the filter names: the ids of those the viewer may read, how many it
 * may not, a catalog id, and whether any of them has its counts pending. When the viewer may read
 * everything and the filter names nothing, only the last (through a partial index of the pending
 * datasets: an empty index, as a rule). Who sees what is the rule of visibility.ts.
 */
/** A viewer who may read every dataset and a filter that names none. */
function seesEverything(viewer: Viewer, filter: Pick<EventFilter, 'catalog' | 'datasets'>): boolean {
  // The rule's kind, not the condition: building the condition to test it for null cost a few
  // Slonik fragments on every page.
  return datasetVisibility(viewer).kind === 'all' && !filter.catalog && filter.datasets.length === 0;
}

function scopeQuery(viewer: Viewer, filter: Pick<EventFilter, 'catalog' | 'datasets'>): Fragment {
  const visible = visibility(viewer);
  if (seesEverything(viewer, filter))
    return sqlText`
      select '{}'::int8[] as ids, 0::int8 as hidden, null::int8 as catalog_id,
             exists (select 1 from datasets where counts_pending) as pending, ${SCOPE_VERSION} as signature,
             1::float8 as share`;
  const conditions = [sqlText`true`];
  if (filter.catalog) conditions.push(sqlText`c.slug = ${filter.catalog}`);
  if (filter.datasets.length > 0)
    conditions.push(sqlText`d.slug = any(${sql.array(filter.datasets, 'text')})`);
  const allowed = visible ? sqlText`coalesce(${visible}, false)` : sqlText`true`;
  const years = (dataset: Fragment) =>
    sqlText`coalesce((select sum(k.event_count) from event_counts k where k.grain = 'y' and k.dataset_id = ${dataset}), 0)::float8`;
  const share =
    filter.catalog && filter.datasets.length === 0
      ? sqlText`${years(sqlText`-r.catalog_id`)} / greatest(${years(sqlText`0`)}, 1)`
      : sqlText`0::float8`;
  return sqlText`
    select ids, hidden, catalog_id, pending, ${SCOPE_VERSION} as signature, ${share} as share
    from (select coalesce(array_agg(d.id order by d.id) filter (where ${allowed}), '{}')::int8[] as ids,
                 count(*) filter (where not ${allowed})::int8 as hidden,
                 min(c.id)::int8 as catalog_id,
                 coalesce(bool_or(d.counts_pending) filter (where ${allowed}), false) as pending
          from datasets d join catalogs c on c.id = d.catalog_id
          where ${allOf(conditions)}) r`;
}

export function postgresEventReader(pool: DatabasePool, options: EventReaderOptions = {}): EventReader {
  const minDensity = options.fineCellsMinDensity ?? 1.5;
  const genericPlanPool = options.genericPlanPool;
  let density = { value: 0, readAt: Number.NEGATIVE_INFINITY };
  async function fineCellsPayOff(): Promise<boolean> {
    if (minDensity <= 0) return true;
    if (performance.now() - density.readAt > 60_000) {
      // reltuples is -1 until a table is first analysed: then no density, the rows answer.
      const value = await pool.oneFirst(typed(DensityRow)`
        select coalesce((select reltuples from pg_class where oid = 'events'::regclass)
                        / nullif((select reltuples from pg_class where oid = 'event_fine_cell_counts'::regclass), 0), 0)::float8
               as density`);
      density = { value, readAt: performance.now() };
    }
    return density.value >= minDensity;
  }

  // Use cases ask for several things at once (a histogram: its range and its per-dataset counts);
  // calls in flight at the same time for the same viewer and filter share one resolution.
  const resolving = new Map<string, Promise<Scope>>();
  function scopeOf(viewer: Viewer, filter: Pick<EventFilter, 'catalog' | 'datasets'>): Promise<Scope> {
    const key = scopeKey(viewer, filter);
    const pending = resolving.get(key);
    if (pending) return pending;
    const scope = resolveScope(viewer, filter).finally(() => resolving.delete(key));
    resolving.set(key, scope);
    return scope;
  }

  /**
   * What scopeQuery gave last for a viewer and filter, for the /events page: its statement then
   * carries a check (`verify`: the scope version, read in the same snapshot as the page) and is run
   * again with a fresh scope when a dataset or catalog changed since. So the page needs no round
   * trip of its own for the scope and is never answered with one that did not hold when it was read.
   */
  const remembered = new Map<string, ScopeRecord>();
  const cache: PageCache | null =
    options.pageCache ?? (options.pageCacheBytes ? pageCache(pool, options.pageCacheBytes) : null);
  const REMEMBERED_LIMIT = 1000;

  async function resolveScope(
    viewer: Viewer,
    filter: Pick<EventFilter, 'catalog' | 'datasets'>,
  ): Promise<Scope> {
    return toScope(await readScope(scopeQuery(viewer, filter)), filter);
  }

  function readScope(query: Fragment): Promise<ScopeRecord> {
    return pool.one(typed(ScopeRow)`select * from (${query}) s`);
  }

  /**
   * A page's scope: the remembered one (or a fresh one, then remembered) and the check its
   * statement carries with the signature it must give.
   */
  async function rememberedScope(
    viewer: Viewer,
    filter: Pick<EventFilter, 'catalog' | 'datasets'>,
  ): Promise<{ scope: Scope; verify: Fragment; signature: string; ids: number[] | null }> {
    const key = scopeKey(viewer, filter);
    let known = remembered.get(key);
    if (!known) {
      known = await readScope(scopeQuery(viewer, filter));
      remember(key, known);
    }
    return {
      scope: await toScope(known, filter),
      verify: SCOPE_VERSION,
      signature: known.signature,
      // The page cache's datasets: null for a viewer who sees every dataset unfiltered (whose scope
      // row lists none), so that a write to any dataset is a change.
      ids: seesEverything(viewer, filter) ? null : known.ids,
    };
  }

  function remember(key: string, row: ScopeRecord): void {
    // Keys come from the request (any slugs), so the map is bounded; dropping it only costs a query.
    if (remembered.size >= REMEMBERED_LIMIT) remembered.clear();
    remembered.set(key, row);
  }

  /**
   * Runs a page statement with the scope's check; when the scope changed since it was remembered,
   * resolves it again and runs the statement again.
   */
  async function withVerifiedScope<T>(
    viewer: Viewer,
    filter: Pick<EventFilter, 'catalog' | 'datasets'>,
    run: (
      scope: Scope,
      verify: Fragment,
      /** The datasets the scope names (null: all) and the signature the check must give. */
      known: { ids: number[] | null; signature: string | null },
    ) => Promise<{ value: T; signatures: Array<string | null> }>,
  ): Promise<T> {
    let value: T | undefined;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const { scope, verify, signature, ids } = await rememberedScope(viewer, filter);
      const result = await run(scope, verify, { ids, signature });
      if (result.signatures.every((seen) => seen === signature)) return result.value;
      remembered.delete(scopeKey(viewer, filter));
      value = result.value;
    }
    // Datasets changed between a fresh resolution and the statement three times in a row: answer
    // with the scope resolved just before, as every read did before the check existed.
    return value as T;
  }

  /**
   * The scope from the datasets row. With no filter and nothing hidden from the viewer, no
   * condition at all, so that the totals rows (dataset_id 0) answer. When the rule hides none of
   * the datasets the filter names (every public catalog for an anonymous caller), the request is
   * answered exactly as for an admin, from the overall or per-catalog totals; when it hides some,
   * from the per-dataset rows of the visible ones. Whatever the scope, none of the counts answer
   * while a dataset in it has its counts pending (`countsPending`).
   */
  async function toScope(
    resolved: ScopeRecord,
    filter: Pick<EventFilter, 'catalog' | 'datasets'>,
  ): Promise<Scope> {
    const unfiltered = !filter.catalog && filter.datasets.length === 0;
    const countsPending = resolved.pending;
    if (resolved.hidden === 0 && unfiltered)
      return {
        datasetIds: null,
        catalogId: null,
        fineCells: !countsPending && (await fineCellsPayOff()),
        countsPending,
        genericPage: !countsPending,
      };
    const wholeCatalog =
      resolved.hidden === 0 &&
      filter.catalog !== null &&
      filter.datasets.length === 0 &&
      resolved.catalog_id !== null;
    return {
      datasetIds: sqlText`${sql.array(resolved.ids, 'int8')}`,
      catalogId: wholeCatalog ? sqlText`${resolved.catalog_id}::int8` : null,
      fineCells: false,
      countsPending,
      genericPage: wholeCatalog && !countsPending && resolved.share >= GENERIC_PAGE_MIN_SHARE,
    };
  }

  return {
    async listEventsPage(viewer, filter, sort, page, options = {}) {
      // The normalised request (parsed filter, sort and page) and who asks: viewers never share
      // entries, and the same page asked in other words is the same entry.
      const key =
        cache && !options.fresh
          ? JSON.stringify([viewer?.id ?? null, viewer?.role ?? null, filter, sort, page])
          : null;
      if (key !== null) {
        const hit = await cache?.lookup(key);
        if (hit) return hit;
      }
      const window = sqlText`limit ${page.limit} offset ${(page.page - 1) * page.limit}`;
      return withVerifiedScope(viewer, filter, async (scope, verify, known) => {
        const data = dataSignature(known.ids);
        // Stored only when every statement saw the remembered scope and the same data versions.
        const answered = (
          value: CachedPage,
          rows: Array<{ scope: string | null; data: string }>,
        ): { value: CachedPage; signatures: Array<string | null> } => {
          const signature = rows[0]?.data;
          if (
            key !== null &&
            signature !== undefined &&
            rows.every((r) => r.scope === known.signature && r.data === signature)
          )
            cache?.store(key, value, known.ids, signature);
          return { value, signatures: rows.map((r) => r.scope) };
        };
        if (boxRowsAnswer(filter, sort)) {
          // A small box (a city at zoom 10 and closer): the level-10 counts would answer little of
          // its total and its rows are read anyway, so one index-only pass over the box's entries of
          // the covering (grid_x) index gives both the total and the page (a top-N sort of them).
          // The page's conditions alone let the planner combine the dataset or catalog index with
          // the grid one in a bitmap and then visit the heap for every event of the box.
          const result = await pool.one(typed(PageRow)`
            with box as materialized (
              select e.id, e.event_timestamp, e.dataset_id from events e
              where ${rawConditions(scope, filter, filter.dates)}
            ), page as materialized (
              select e.id from box e order by ${orderBy(sort)} ${window}
            )
            select (${pageJson(sort)}) as events, (select count(*) from box)::int8 as total,
                   ${verify} as scope, ${data} as data`);
          return answered({ eventsJson: result.events, totalDocs: result.total }, [result]);
        }
        // The page's ids first, from the covering indexes where the sort allows it (id, time, place,
        // dataset are all in them); then only the page's rows, with their data, turned into the
        // response's JSON by the database (Node passes the text on).
        const events = sqlText`
          with page as materialized (
            select e.id from events e
            where ${rawConditions(scope, filter, filter.dates)}
            order by ${orderBy(sort)} ${window}
          )
          ${pageJson(sort)}`;
        const total = sqlText`
          select coalesce(sum(n), 0)::int8 from (${unionParts(countParts(scope, filter))}) u`;
        // A total from the precomputed counts is cheap: one statement, one round trip. A total that
        // reads rows (bounds, a custom date field) runs beside the page, on a second connection.
        if (filter.bounds === null && filter.dateField.kind === 'eventTimestamp') {
          // Prepared (the text takes a few dozen shapes: the date spans of the window, the sort, the
          // scope): its parse and analysis were about a quarter of the backend's CPU per page. Custom
          // plans (PostgreSQL never chose the generic one: with LIMIT and OFFSET parameters it assumes
          // a tenth of the rows) cost as much again, so the shapes whose generic plan is as good run
          // on the generic-plan pool.
          const target = genericPlanPool && genericPlanPage(scope, filter, sort) ? genericPlanPool : pool;
          const result = await target.one(
            prepared(typed(PageRow)`select (${events}) as events, (${total}) as total, ${verify} as scope,
                                     ${data} as data`),
          );
          return answered({ eventsJson: result.events, totalDocs: result.total }, [result]);
        }
        const [page, count] = await Promise.all([
          pool.one(typed(EventsRow)`select (${events}) as events, ${verify} as scope, ${data} as data`),
          pool.one(typed(CheckedCountRow)`select (${total}) as count, ${verify} as scope, ${data} as data`),
        ]);
        // Two statements, two snapshots: equal data versions in both mean no write in between.
        return answered({ eventsJson: page.events, totalDocs: count.count }, [page, count]);
      });
    },

    async countEvents(viewer, filter) {
      const scope = await scopeOf(viewer, filter);
      return pool.oneFirst(typed(CountRow)`
        select coalesce(sum(n), 0)::int8 as count from (${unionParts(countParts(scope, filter))}) p`);
    },

    async countByDataset(viewer, filter) {
      const scope = await scopeOf(viewer, filter);
      const rows = await pool.any(typed(DatasetCountRow)`
        select p.dataset_id, d.title as dataset_title, d.catalog_id, c.title as catalog_title, p.count
        from (select dataset_id, sum(n)::int8 as count
              from (${unionParts(countParts(scope, filter, { perDataset: true }))}) u
              group by dataset_id) p
        join datasets d on d.id = p.dataset_id join catalogs c on c.id = d.catalog_id
        where p.count > 0
        order by p.count desc, p.dataset_id`);
      return rows.map((r) => ({
        datasetId: r.dataset_id,
        datasetTitle: r.dataset_title,
        catalogId: r.catalog_id,
        catalogTitle: r.catalog_title,
        count: r.count,
      }));
    },

    async clusterFeatures(viewer, filter, level) {
      const scope = await scopeOf(viewer, filter);
      const groups = level === null ? locationGroups(scope, filter) : cellGroups(scope, filter, level);
      // Materialized: the groups are computed once (inlined, each use of g.ids below would repeat,
      // and plan again, its look-up of small cells' ids).
      return pool.oneFirst(typed(FeaturesRow)`
        with g as materialized (${groups})
        select coalesce('[' || string_agg(${featureJson(sqlText`g`)}, ',') || ']', '[]') as features
        from g`);
    },

    async clusterSizePercentiles(viewer, filter, level, fractions) {
      const scope = await scopeOf(viewer, filter);
      const groups =
        level === null
          ? sqlText`select count(*) as count from events e
              where e.location is not null and ${rawConditions(scope, filter, filter.dates)}
              group by st_x(e.location), st_y(e.location)`
          : cellQuery(scope, filter, level);
      const values = await pool.oneFirst(typed(PercentilesRow)`
        select percentile_disc(${sql.array(fractions, 'float8')}) within group (order by count)::int8[] as values
        from (${groups}) g`);
      return values;
    },

    async timeRange(viewer, filter) {
      const scope = await scopeOf(viewer, filter);
      const fromRows = async () => {
        const range = await pool.one(typed(RangeRow)`
          select min(${dateExpr(filter)}) as min, max(${dateExpr(filter)}) as max
          from events e where ${rawConditions(scope, filter, filter.dates)}`);
        return range.min && range.max ? { min: range.min, max: range.max } : null;
      };
      if (scope.countsPending) return fromRows();
      if (filter.dateField.kind === 'eventTimestamp' && filter.bounds && !coversMostOfWorld(filter.bounds))
        return (await boxTimeRange(scope, filter)) ?? fromRows();
      if (!usesDayCounts(filter)) return fromRows();
      // The first and last days with events come from the day counts; the exact instants from the
      // rows of those two days only.
      const span: PeriodSpan = {
        grain: 'day',
        from: filter.dates.from === null ? null : floorPeriod(filter.dates.from, 'day'),
        to: filter.dates.to,
      };
      const days = await pool.one(typed(RangeRow)`
        select min(period) as min, max(period) as max from event_counts where ${periodConditions(scope, span, false)}`);
      if (!days.min || !days.max) return null;
      const within = (day: string) => ({
        from: later(filter.dates.from, day),
        to: earlier(filter.dates.to, nextPeriod(day, 'day')),
      });
      const range = await pool.one(typed(RangeRow)`
        select (select min(e.event_timestamp) from events e
                where ${rawConditions(scope, filter, within(days.min))}) as min,
               (select max(e.event_timestamp) from events e
                where ${rawConditions(scope, filter, within(days.max))}) as max`);
      // The first or last day may hold events only outside a date range that starts or ends within it.
      return range.min && range.max ? { min: range.min, max: range.max } : fromRows();
    },

    async histogram(viewer, filter, bins) {
      const scope = await scopeOf(viewer, filter);
      const bin = (t: Fragment) =>
        bins.kind === 'fixed'
          ? sqlText`date_bin(make_interval(secs => ${bins.sizeSeconds}), ${t}, to_timestamp(${bins.originSeconds}))`
          : sqlText`date_trunc(${bins.granularity}, ${t}, 'UTC')`;
      // Period counts can be binned only when every bin is made of whole periods.
      const grain =
        bins.kind === 'calendar'
          ? bins.granularity === 'month'
            ? 'month'
            : 'day'
          : bins.sizeSeconds % 86_400 === 0 && bins.originSeconds % 86_400 === 0
            ? 'day'
            : null;
      // The months a bin boundary falls inside (between the first and the last year with events),
      // for boxes: the other months can come from month counts.
      const cutMonths = sqlText`
        select m from generate_series(
          (select min(period) from event_counts where grain = 'y' and dataset_id = 0),
          (select max(period) from event_counts where grain = 'y' and dataset_id = 0) + interval '11 months',
          interval '1 month') m
        where ${bin(sqlText`m`)} <> ${bin(sqlText`m + interval '1 month' - interval '1 microsecond'`)}`;
      const parts = countParts(scope, filter, { histogram: grain, cutMonths });
      const rows = await pool.any(typed(BinRow)`
        select extract(epoch from ${bin(sqlText`t`)})::int8 as bin, sum(n)::int8 as count
        from (${unionParts(parts)}) p group by 1`);
      return new Map(rows.map((r) => [r.bin, r.count]));
    },

    async extent(viewer, filter) {
      const scope = await scopeOf(viewer, filter);
      const count = await pool.oneFirst(typed(CountRow)`
        select coalesce(sum(n), 0)::int8 as count from (${unionParts(countParts(scope, filter))}) p`);
      const where = rawConditions(scope, filter, filter.dates);
      const extent = await pool.one(typed(ExtentRow)`
        select count(e.location)::int8 as located,
               min(st_x(e.location)) as west, max(st_x(e.location)) as east,
               min(st_y(e.location)) as south, max(st_y(e.location)) as north
        from events e where ${where}`);
      const { west, east, south, north } = extent;
      return {
        count,
        located: extent.located,
        bounds:
          west === null || east === null || south === null || north === null
            ? null
            : { west, east, south, north },
      };
    },

    async dataSources(viewer) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const rows = await pool.any(typed(SourceRow)`
        select c.id as catalog_id, c.slug as catalog_slug, c.title as catalog_title,
               c.description as catalog_description,
               d.id as dataset_id, d.slug as dataset_slug, d.title as dataset_title,
               d.description as dataset_description,
               case when jsonb_typeof(d.schema_settings->'dateFields') = 'array'
                    then array(select jsonb_array_elements_text(d.schema_settings->'dateFields')) end as date_fields,
               ${DATASET_TOTAL} as count
        from catalogs c join datasets d on d.catalog_id = c.id
        where ${visible}
        order by c.title, c.id, d.title, d.id`);
      const catalogs = new Map<number, Awaited<ReturnType<EventReader['dataSources']>>[number]>();
      for (const r of rows) {
        let catalog = catalogs.get(r.catalog_id);
        if (!catalog) {
          catalog = {
            id: r.catalog_id,
            slug: r.catalog_slug,
            title: r.catalog_title,
            description: r.catalog_description,
            eventCount: 0,
            datasets: [],
          };
          catalogs.set(r.catalog_id, catalog);
        }
        if (r.dataset_id === null || r.dataset_slug === null || r.dataset_title === null) continue;
        catalog.eventCount += r.count;
        catalog.datasets.push({
          id: r.dataset_id,
          slug: r.dataset_slug,
          title: r.dataset_title,
          description: r.dataset_description,
          eventCount: r.count,
          dateFields: r.date_fields ?? [],
        });
      }
      return [...catalogs.values()];
    },

    async sampleData(viewer, datasetId, sampleSize) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const dataset = await pool.maybeOne(typed(DatasetRow)`
        select d.id, d.slug, d.title,
               case when jsonb_typeof(d.schema_settings->'dateFields') = 'array'
                    then array(select jsonb_array_elements_text(d.schema_settings->'dateFields'))
                    else '{}'::text[] end as date_fields,
               ${DATASET_TOTAL} as total
        from datasets d join catalogs c on c.id = d.catalog_id
        where d.id = ${datasetId} and ${visible}`);
      if (!dataset) return null;
      const rows = await pool.any(typed(DataRow)`
        select data from events where dataset_id = ${datasetId}
        order by event_timestamp desc limit ${sampleSize}`);
      return {
        dataset: {
          id: dataset.id,
          slug: dataset.slug,
          title: dataset.title,
          dateFields: dataset.date_fields,
        },
        total: dataset.total,
        samples: rows.map((r) => r.data),
      };
    },
  };

  /**
   * The first and last instants in a box (not most of the world, where the rows in time order find
   * them at once): the first and last periods with events in the cells wholly inside the box, from
   * the counts (days for unfiltered views, else months), bound where the rows are read. No inner
   * event lies before the first period, so the first event in the box, inner or in an edge cell,
   * is the first row from the start of the date range to the end of that period (the rows in that
   * span, through the time index); the last likewise. Null when the counts cannot tell (no inner
   * cell holds events in the range, or that period's events are all outside it): the rows answer.
   */
  async function boxTimeRange(
    scope: Scope,
    filter: EventFilter,
  ): Promise<{ min: string; max: string } | null> {
    const bounds = filter.bounds;
    if (!bounds) return null;
    const cells = longitudeRanges(bounds).flatMap((range) => {
      const inner = innerCellRange({ ...bounds, west: range.west, east: range.east }, ROLLUP_LEVEL);
      return inner
        ? [
            sqlText`(cell_x between ${inner.x0} and ${inner.x1} and cell_y between ${inner.y0} and ${inner.y1})`,
          ]
        : [];
    });
    if (cells.length === 0) return null;
    const inCells = sqlText`(${joinSql(cells, ' or ')})`;
    const grain: Grain = readsDayCells(scope, false) ? 'day' : 'month';
    const from = filter.dates.from === null ? null : floorPeriod(filter.dates.from, grain);
    const to = filter.dates.to;
    const inWindow = sqlText`
      ${from === null ? sqlText`` : sqlText`and d.day >= ${from}::timestamptz`}
      ${to === null ? sqlText`` : sqlText`and d.day < ${to}::timestamptz`}`;
    const periods =
      grain === 'day'
        ? // Per cell that holds events, its first and last day through the key: a few index probes.
          await pool.one(typed(RangeRow)`
            select min(f.day) as min, max(l.day) as max
            from (select distinct cell_x as x, cell_y as y from event_cell_counts
                  where grain = 'y' and dataset_id = 0 and ${inCells}) c
            cross join lateral (select day from event_cell_day_counts d
                                where d.cell_x = c.x and d.cell_y = c.y ${inWindow}
                                order by day limit 1) f
            cross join lateral (select day from event_cell_day_counts d
                                where d.cell_x = c.x and d.cell_y = c.y ${inWindow}
                                order by day desc limit 1) l`)
        : await pool.one(typed(RangeRow)`
            select min(period) as min, max(period) as max from event_cell_counts
            where ${periodConditions(scope, { grain, from, to }, false)} and ${inCells}`);
    if (!periods.min || !periods.max) return null;
    const range = await pool.one(typed(RangeRow)`
      select (select min(e.event_timestamp) from events e
              where ${rawConditions(scope, filter, { from: filter.dates.from, to: earlier(to, nextPeriod(periods.min, grain)) })}) as min,
             (select max(e.event_timestamp) from events e
              where ${rawConditions(scope, filter, { from: later(filter.dates.from, periods.max), to })}) as max`);
    return range.min && range.max ? { min: range.min, max: range.max } : null;
  }

  /**
   * Zoom 16 and deeper: one group per exact location, as (key, lon, lat, count, ids): ids ascending
   * when ten or fewer, else null.
   */
  function locationGroups(scope: Scope, filter: EventFilter): Fragment {
    return sqlText`
      select 'cluster:p:' || st_x(e.location) || ':' || st_y(e.location) as key,
             st_x(e.location) as lon, st_y(e.location) as lat, count(*)::int8 as count,
             case when count(*) <= ${MAX_EVENT_IDS} then array_agg(e.id order by e.id) end as ids
      from events e
      where e.location is not null and ${rawConditions(scope, filter, filter.dates)}
      group by st_x(e.location), st_y(e.location)`;
  }
}

/**
 * A group (key, lon, lat, count, ids) as the JSON text of its GeoJSON feature: one event is an
 * `event-point` with its title, any other group an `event-cluster` with its count and, when ten or
 * fewer, its ids. Written as text: json_build_object took twice as long for the same features (a
 * city view at zoom 10-12 has 4-6k of them, a megabyte of JSON).
 */
function featureJson(g: Fragment): Fragment {
  return sqlText`
    '{"type":"Feature","geometry":{"type":"Point","coordinates":[' || ${g}.lon || ',' || ${g}.lat || ']},"properties":' ||
    case when ${g}.count = 1 and cardinality(${g}.ids) = 1
         then '{"id":' || ${g}.ids[1] || ',"type":"event-point","title":'
              || to_json(coalesce((select t.title from events t where t.id = ${g}.ids[1]), ''))::text || '}'
         else '{"id":' || to_json(${g}.key)::text || ',"type":"event-cluster","count":' || ${g}.count
              || case when ${g}.ids is null then '' else ',"eventIds":[' || array_to_string(${g}.ids, ',') || ']' end
              || '}'
    end || '}'`;
}

/**
 * Clusters at a grid level as (key, lon, lat, count, ids): counts and centroids per cell, and the ids
 * (ascending) of cells of ten or fewer events, gathered as text from the parts that carry them (the
 * rows, and the level-16 counts' lists); a cell whose ids are not all there (counted from the
 * level-10 counts, or a level-16 cell that lost its list) reads them from its events.
 *
 * The parts come sorted by cell to a GroupAggregate: as arrays, in a hash table PostgreSQL assumed
 * 8 kB per cell and spilled it to disk, and the level-16 lists unnested gave 30k rows for a city at
 * zoom 10 with 1M events where 12k counts would do. The lists are sorted per small cell only. At
 * level 16 itself (zoom 12-13) the inner level-16 cells are clusters as they are, and only the rows
 * of the edge cells (never the same cells) are grouped.
 */
function cellGroups(scope: Scope, filter: EventFilter, level: number): Fragment {
  const shift = GRID_LEVEL - level;
  const small = (count: Fragment, ids: Fragment) =>
    sqlText`case when ${count} <= ${MAX_EVENT_IDS} then (select array_agg(i order by i) from unnest(${ids}) i) end`;
  const grouped = (parts: Fragment[]) => sqlText`
    select cx, cy, count, lon, lat, ${small(sqlText`count`, sqlText`string_to_array(ids, ',')::int8[]`)} as known
    from (select cx, cy, sum(n)::int8 as count, sum(slon) / sum(n) as lon, sum(slat) / sum(n) as lat,
                 case when sum(n) <= ${MAX_EVENT_IDS} then string_agg(ids, ',') end as ids
          from (select * from (${unionParts(parts)}) u order by cx, cy) p
          group by cx, cy) g`;
  const rows = (part: Fragment) => sqlText`select cx, cy, n, slon, slat, id::text as ids from (${part}) r`;
  let clusters: Fragment;
  if (!readsFineCells(scope, filter, level)) {
    clusters = grouped([rows(unionParts(countParts(scope, filter, { level })))]);
  } else {
    const fine = fineCellParts(filter, level);
    const cellShift = FINE_LEVEL - level;
    clusters =
      cellShift === 0
        ? unionParts([
            ...fine.cells.map(
              (inside) => sqlText`
                select f.cell_x as cx, f.cell_y as cy, f.event_count::int8 as count,
                       f.sum_lon / f.event_count as lon, f.sum_lat / f.event_count as lat,
                       ${small(sqlText`f.event_count`, sqlText`f.ids`)} as known
                from event_fine_cell_counts f where ${inside}`,
            ),
            ...(fine.rows.length > 0 ? [grouped(fine.rows.map(rows))] : []),
          ])
        : grouped([
            ...fine.cells.map(
              (inside) => sqlText`
                select f.cell_x >> ${cellShift} as cx, f.cell_y >> ${cellShift} as cy, f.event_count::int8 as n,
                       f.sum_lon as slon, f.sum_lat as slat,
                       case when f.event_count <= ${MAX_EVENT_IDS} then nullif(array_to_string(f.ids, ','), '') end as ids
                from event_fine_cell_counts f where ${inside}`,
            ),
            ...fine.rows.map(rows),
          ]);
  }
  return sqlText`
    with c as materialized (${clusters})
    select 'cluster:' || ${level}::int4 || ':' || c.cx || ':' || c.cy as key, c.lon, c.lat, c.count,
           case when c.count > ${MAX_EVENT_IDS} then null
                when cardinality(c.known) = c.count then c.known
                else (select coalesce(array_agg(e.id order by e.id), '{}') from events e
                      where e.location && ${cellEnvelope(sqlText`c.cx`, sqlText`c.cy`, level)}
                        and e.grid_x >> ${shift} = c.cx and e.grid_y >> ${shift} = c.cy
                        and ${rawConditions(scope, filter, filter.dates)}) end as ids
    from c`;
}

/** Clusters at a grid level: counts per cell. */
function cellQuery(scope: Scope, filter: EventFilter, level: number): Fragment {
  return sqlText`
    select cx, cy, sum(n)::int8 as count from (${unionParts(countParts(scope, filter, { level }))}) p
    group by cx, cy`;
}

function usesDayCounts(filter: EventFilter): boolean {
  return filter.dateField.kind === 'eventTimestamp' && filter.bounds === null;
}

/**
 * The parts whose union is exactly the filtered events. `level` asks for cells of that grid level
 * (cx, cy); `histogram` asks for a time column t fine enough for the bins: 'day' when each bin is
 * made of whole UTC days, 'month' when of whole months, null when only rows will do.
 */
function countParts(scope: Scope, filter: EventFilter, need: Need = {}): Fragment[] {
  const level = need.level ?? null;
  const perDataset = need.perDataset ?? false;
  const raw = () => [rawPart(scope, filter, filter.dates, level)];
  if (scope.countsPending || filter.dateField.kind !== 'eventTimestamp' || need.histogram === null)
    return raw();
  if (filter.bounds === null) {
    if (level !== null) return raw();
    const grains: Grain[] =
      need.histogram === 'day'
        ? ['day']
        : need.histogram === 'month'
          ? ['month', 'day']
          : ['year', 'month', 'day'];
    return periodParts(scope, filter, grains, perDataset);
  }
  if (level === null && coversMostOfWorld(filter.bounds)) return worldParts(scope, filter, need);
  // Calendar months: whole months of the inner cells from their month counts. Finer bins: the
  // months no bin boundary cuts from the month counts, the others from the day counts (unfiltered
  // views only); else the rows.
  if (need.histogram === 'month') return cellParts(scope, filter, null, perDataset, ['month']);
  if (need.histogram) {
    const cuts = need.cutMonths ?? null;
    return cuts && readsDayCells(scope, perDataset)
      ? cellParts(scope, filter, null, perDataset, ['month'], cuts)
      : raw();
  }
  if (level !== null && level > ROLLUP_LEVEL)
    return readsFineCells(scope, filter, level) ? fineCellCounts(filter, level) : raw();
  return cellParts(scope, filter, level, perDataset);
}

type Need = {
  level?: number;
  histogram?: 'day' | 'month' | null;
  perDataset?: boolean;
  /** With histogram 'day': the month starts (a query's rows `m`) a bin boundary falls inside. */
  cutMonths?: Fragment;
};

/** event_cell_day_counts holds the totals over all datasets only. */
function readsDayCells(scope: Scope, perDataset: boolean): boolean {
  return scope.datasetIds === null && scope.catalogId === null && !perDataset;
}

const GRAIN_CODE: Record<Grain, string> = { year: 'y', month: 'm', day: 'd' };

/**
 * Conditions on event_counts / event_cell_counts. Rows with dataset_id 0 are the totals over all
 * datasets, rows with -<catalog id> a catalog's: read when that is the scope and no per-dataset
 * breakdown is asked for.
 */
function periodConditions(scope: Scope, span: PeriodSpan, perDataset: boolean): Fragment {
  const conditions: Fragment[] = [sqlText`grain = ${GRAIN_CODE[span.grain]}`];
  if (span.from !== null) conditions.push(sqlText`period >= ${span.from}::timestamptz`);
  if (span.to !== null) conditions.push(sqlText`period < ${span.to}::timestamptz`);
  // `<= 0`, redundant, lets a generic plan (the /events page's, genericPlanPage) prove that the
  // partial index of the total rows (migration 0250) applies: without it, it read the primary key's
  // period range of every dataset.
  if (scope.catalogId !== null && !perDataset)
    conditions.push(sqlText`dataset_id = -${scope.catalogId} and dataset_id <= 0`);
  else if (scope.datasetIds !== null) conditions.push(sqlText`dataset_id = any(${scope.datasetIds})`);
  else conditions.push(perDataset ? sqlText`dataset_id > 0` : sqlText`dataset_id = 0`);
  return allOf(conditions);
}

/** No bounds: whole years, months and days from event_counts, the partial days from the rows. */
function periodParts(scope: Scope, filter: EventFilter, grains: Grain[], perDataset: boolean): Fragment[] {
  const split = splitRange(filter.dates, grains);
  return [
    ...split.periods.map(
      (span) => sqlText`
        select dataset_id, catalog_id, period as t, null::int4 as cx, null::int4 as cy, null::int8 as id,
               event_count::int8 as n, null::float8 as slon, null::float8 as slat
        from event_counts where ${periodConditions(scope, span, perDataset)}`,
    ),
    ...split.rest.map((piece) => rawPart(scope, filter, piece, null)),
  ];
}

/**
 * Bounds: per longitude range, the whole years and months in the level-10 cells wholly inside the
 * box come from event_cell_counts, and for unfiltered views the whole days at the ends of a date
 * range (and the months in `cutMonths`) from event_cell_day_counts; the rows supply the edge cells
 * and the partial days (or months).
 */
function cellParts(
  scope: Scope,
  filter: EventFilter,
  level: number | null,
  perDataset: boolean,
  grains: Grain[] = ['year', 'month'],
  cutMonths: Fragment | null = null,
): Fragment[] {
  const bounds = filter.bounds;
  if (!bounds) throw new Error('cellParts needs bounds');
  const days = readsDayCells(scope, perDataset);
  const split = splitRange(filter.dates, days ? [...grains, 'day'] : grains);
  const parts: Fragment[] = [];
  for (const range of longitudeRanges(bounds)) {
    const box = { north: bounds.north, south: bounds.south, west: range.west, east: range.east };
    const boxFilter = { ...filter, bounds: box };
    const inner = split.periods.length > 0 ? innerCellRange(box, ROLLUP_LEVEL) : null;
    if (!inner) {
      parts.push(rawPart(scope, boxFilter, filter.dates, level));
      continue;
    }
    const shift = level === null ? 0 : ROLLUP_LEVEL - level;
    const cx = level === null ? sqlText`null::int4` : sqlText`cell_x >> ${shift}`;
    const cy = level === null ? sqlText`null::int4` : sqlText`cell_y >> ${shift}`;
    const cells = sqlText`cell_x between ${inner.x0} and ${inner.x1} and cell_y between ${inner.y0} and ${inner.y1}`;
    for (const span of split.periods) {
      if (span.grain === 'day') {
        // A day span lies within one month (the ends of a date range).
        if (span.from === null || span.to === null) throw new Error('a day span is never open');
        const month = sqlText`m.period = ${floorPeriod(span.from, 'month')}::timestamptz`;
        parts.push(dayCellPart(inner, level, month, span));
        continue;
      }
      const cut = cutMonths && span.grain === 'month';
      parts.push(sqlText`
        select dataset_id, catalog_id, period as t, ${cx} as cx, ${cy} as cy, null::int8 as id,
               event_count::int8 as n, sum_lon as slon, sum_lat as slat
        from event_cell_counts
        where ${periodConditions(scope, span, perDataset)} and ${cells}
          ${cut ? sqlText`and period not in (select m from (${cutMonths}) k)` : sqlText``}`);
      if (cut) {
        const months = [sqlText`m.period in (select m from (${cutMonths}) k)`];
        if (span.from !== null) months.push(sqlText`m.period >= ${span.from}::timestamptz`);
        if (span.to !== null) months.push(sqlText`m.period < ${span.to}::timestamptz`);
        parts.push(dayCellPart(inner, level, allOf(months), null));
      }
    }
    // The whole periods form one contiguous range; its rows in the edge cells are read strip by
    // strip (west, east, north, south of the inner cells), each an envelope for the spatial index
    // and exact conditions on the level-24 cell indices.
    const froms = split.periods.map((span) => span.from);
    const tos = split.periods.map((span) => span.to);
    const covered = {
      from: froms.includes(null) ? null : ((froms as string[]).sort()[0] ?? null),
      to: tos.includes(null) ? null : ((tos as string[]).sort().at(-1) ?? null),
    };
    for (const strip of edgeStrips(box, inner)) parts.push(rawPart(scope, boxFilter, covered, level, strip));
    for (const piece of split.rest) parts.push(rawPart(scope, boxFilter, piece, level));
  }
  return parts;
}

/**
 * Day counts of the inner cells in the months `months` (a condition on `m.period`), within `span`
 * when given. Driven by those months' cell rows (the cells that hold events then), each reading its
 * days through the table's key (`offset 0` keeps the planner from joining every day of those cells
 * and filtering them afterwards).
 */
function dayCellPart(
  inner: { x0: number; x1: number; y0: number; y1: number },
  level: number | null,
  months: Fragment,
  span: { from: string | null; to: string | null } | null,
): Fragment {
  const shift = level === null ? 0 : ROLLUP_LEVEL - level;
  const cx = level === null ? sqlText`null::int4` : sqlText`m.cell_x >> ${shift}`;
  const cy = level === null ? sqlText`null::int4` : sqlText`m.cell_y >> ${shift}`;
  const from =
    span === null || span.from === null
      ? sqlText`m.period`
      : sqlText`greatest(m.period, ${span.from}::timestamptz)`;
  const end = sqlText`m.period + interval '1 month'`;
  const to = span === null || span.to === null ? end : sqlText`least(${end}, ${span.to}::timestamptz)`;
  return sqlText`
    select 0::int8 as dataset_id, 0::int8 as catalog_id, d.day as t, ${cx} as cx, ${cy} as cy, null::int8 as id,
           d.event_count::int8 as n, d.sum_lon as slon, d.sum_lat as slat
    from event_cell_counts m
    cross join lateral (select d.day, d.event_count, d.sum_lon, d.sum_lat from event_cell_day_counts d
                        where d.cell_x = m.cell_x and d.cell_y = m.cell_y and d.day >= ${from} and d.day < ${to}
                        offset 0) d
    where m.grain = 'm' and m.dataset_id = 0 and ${months}
      and m.cell_x between ${inner.x0} and ${inner.x1} and m.cell_y between ${inner.y0} and ${inner.y1}`;
}

/**
 * Boxes covering most of the world map (the whole world at zoom 0-2, the Explore page's first view,
 * such as west -170 east 170): every event minus those outside the box, which are fewer than those
 * inside (the counts of the cells inside would be most of the cell rows). The box holds exactly the
 * located events with latitude in [south, north] and longitude in one of its ranges (the cell-index
 * conditions of rawConditions follow from the coordinate ones).
 */
const MOSTLY_WORLD = 0.5;

function coversMostOfWorld(bounds: EventFilter['bounds']): boolean {
  return bounds !== null && mercatorShare(bounds) >= MOSTLY_WORLD;
}

/**
 * The counts without bounds, less one per event outside the box: unlocated, beyond its latitudes, or
 * within them but beyond its longitudes (disjoint sets, each found through the spatial index).
 */
function worldParts(scope: Scope, filter: EventFilter, need: Need): Fragment[] {
  const bounds = filter.bounds;
  if (!bounds) throw new Error('worldParts needs bounds');
  const { north, south, west, east } = bounds;
  const everywhere = { ...filter, bounds: null };
  const outside = (condition: Fragment) => rawPart(scope, everywhere, filter.dates, null, condition, -1);
  // Beside the box (its latitudes, beyond its longitudes): a range of the level-24 cell index
  // (widened by one cell), which the covering index on grid_x reads without the rows (a city lies
  // there, Auckland beyond 170° E: through the spatial index, its rows cost 30 times more).
  const x = (longitude: number) => mercatorCell(longitude, 0, GRID_LEVEL).x;
  const beside = (from: number, to: number, condition: Fragment) =>
    outside(sqlText`e.grid_x between ${Math.max(0, x(from) - 1)} and ${x(to) + 1}
      and st_y(e.location) between ${south} and ${north} and ${condition}`);
  // The unlocated without their (null) coordinates: an index-only scan of the partial index of
  // migration 0220 (asked for st_x(e.location), the planner took a bitmap scan of the spatial index
  // and the rows instead, 30 times slower).
  const unlocated = sqlText`
    select e.dataset_id, e.catalog_id, ${dateExpr(filter)} as t, null::int4 as cx, null::int4 as cy, e.id,
           -1::int8 as n, null::float8 as slon, null::float8 as slat
    from events e where e.location is null and ${rawConditions(scope, everywhere, filter.dates)}`;
  const parts = [
    ...countParts(scope, everywhere, need),
    unlocated,
    outside(
      sqlText`e.location && st_makeenvelope(-180, ${north}, 180, 90, 4326) and st_y(e.location) > ${north}`,
    ),
    outside(
      sqlText`e.location && st_makeenvelope(-180, -90, 180, ${south}, 4326) and st_y(e.location) < ${south}`,
    ),
  ];
  if (west > east)
    parts.push(beside(east, west, sqlText`st_x(e.location) > ${east} and st_x(e.location) < ${west}`));
  else {
    if (west > -180) parts.push(beside(-180, west, sqlText`st_x(e.location) < ${west}`));
    if (east < 180) parts.push(beside(east, 180, sqlText`st_x(e.location) > ${east}`));
  }
  return parts;
}

/**
 * Whether a map view at a level reads event_fine_cell_counts: unfiltered views at levels finer than
 * the level-10 counts up to its own (zoom 9-13), no filter of any kind, when the table pays.
 */
function readsFineCells(scope: Scope, filter: EventFilter, level: number): boolean {
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

/**
 * An unfiltered view at zoom 9-13 (see readsFineCells): per longitude range of its box, the level-16
 * cells wholly inside it, as a condition on event_fine_cell_counts `f`, and the rows of the rest
 * (the edge cells, or the whole range when no cell fits inside), as parts.
 */
function fineCellParts(filter: EventFilter, level: number): { cells: Fragment[]; rows: Fragment[] } {
  const bounds = filter.bounds;
  if (!bounds) throw new Error('fineCellParts needs bounds');
  const cells: Fragment[] = [];
  const rows: Fragment[] = [];
  const none = {
    datasetIds: null,
    catalogId: null,
    fineCells: true,
    countsPending: false,
    genericPage: false,
  };
  for (const range of longitudeRanges(bounds)) {
    const box = { north: bounds.north, south: bounds.south, west: range.west, east: range.east };
    const boxFilter = { ...filter, bounds: box };
    const inner = innerCellRange(box, FINE_LEVEL);
    if (!inner) {
      rows.push(rawPart(none, boxFilter, filter.dates, level));
      continue;
    }
    cells.push(
      sqlText`f.cell_x between ${inner.x0} and ${inner.x1} and f.cell_y between ${inner.y0} and ${inner.y1}`,
    );
    for (const strip of edgeStrips(box, inner, FINE_LEVEL))
      rows.push(rawPart(none, boxFilter, filter.dates, level, strip));
  }
  return { cells, rows };
}

/** The parts of fineCellParts for counts: the inner level-16 cells' counts and coordinate sums. */
function fineCellCounts(filter: EventFilter, level: number): Fragment[] {
  const shift = FINE_LEVEL - level;
  const { cells, rows } = fineCellParts(filter, level);
  return [
    ...cells.map(
      (inside) => sqlText`
        select null::int8 as dataset_id, null::int8 as catalog_id, null::timestamptz as t,
               f.cell_x >> ${shift} as cx, f.cell_y >> ${shift} as cy, null::int8 as id,
               f.event_count::int8 as n, f.sum_lon as slon, f.sum_lat as slat
        from event_fine_cell_counts f where ${inside}`,
    ),
    ...rows,
  ];
}

/** The parts of a box outside the inner cells (of a level), as disjoint strips. */
function edgeStrips(
  box: { north: number; south: number; east: number; west: number },
  inner: { x0: number; x1: number; y0: number; y1: number },
  level: number = ROLLUP_LEVEL,
): Fragment[] {
  const size = 2 ** level;
  const s = GRID_LEVEL - level;
  const innerWest = cellBounds(inner.x0, inner.y0, level).west;
  const innerNorth = cellBounds(inner.x0, inner.y0, level).north;
  const innerEast = cellBounds(inner.x1, inner.y1, level).east;
  const innerSouth = cellBounds(inner.x1, inner.y1, level).south;
  const e = 1e-7;
  const envelope = (west: number, south: number, east: number, north: number) =>
    sqlText`e.location && st_makeenvelope(${west}, ${south}, ${east}, ${north}, 4326)`;
  const xInside = sqlText`e.grid_x >= ${inner.x0 << s} and e.grid_x < ${(inner.x1 + 1) << s}`;
  const strips: Fragment[] = [];
  // West and east: a narrow range of grid_x, which the covering index reads without the rows. An
  // envelope for the spatial index read the rows instead (a city on the edge of a zoom-6 view,
  // 122k rows at 10M events: 2.9 s).
  if (inner.x0 > 0) strips.push(sqlText`e.grid_x < ${inner.x0 << s}`);
  if (inner.x1 < size - 1) strips.push(sqlText`e.grid_x >= ${(inner.x1 + 1) << s}`);
  if (inner.y0 > 0) {
    strips.push(
      sqlText`${envelope(innerWest - e, innerNorth - e, innerEast + e, box.north)} and ${xInside} and e.grid_y < ${inner.y0 << s}`,
    );
  }
  if (inner.y1 < size - 1) {
    strips.push(
      sqlText`${envelope(innerWest - e, box.south, innerEast + e, innerSouth + e)} and ${xInside} and e.grid_y >= ${(inner.y1 + 1) << s}`,
    );
  }
  return strips;
}

function rawPart(
  scope: Scope,
  filter: EventFilter,
  dates: { from: string | null; to: string | null },
  level: number | null,
  extra?: Fragment,
  sign: 1 | -1 = 1,
): Fragment {
  const shift = level === null ? 0 : GRID_LEVEL - level;
  const located = level === null ? sqlText`true` : sqlText`e.location is not null`;
  return sqlText`
    select e.dataset_id, e.catalog_id, ${dateExpr(filter)} as t,
           ${level === null ? sqlText`null::int4` : sqlText`e.grid_x >> ${shift}`} as cx,
           ${level === null ? sqlText`null::int4` : sqlText`e.grid_y >> ${shift}`} as cy, e.id,
           ${sign}::int8 as n, st_x(e.location) as slon, st_y(e.location) as slat
    from events e
    where ${located} and ${rawConditions(scope, filter, dates)} ${extra ? sqlText`and ${extra}` : sqlText``}`;
}

function unionParts(parts: Fragment[]): Fragment {
  return joinSql(parts, ' union all ');
}

function allOf(conditions: Fragment[]): Fragment {
  return joinSql(conditions, ' and ');
}

function dateExpr(filter: EventFilter): Fragment {
  if (filter.dateField.kind === 'eventTimestamp') return sqlText`e.event_timestamp`;
  return sqlText`chronomap_try_timestamptz(e.data #>> ${sql.array(filter.dateField.path, 'text')})`;
}

/**
 * The events of a `page` CTE of ids, as the JSON text of the response's array, in the page's order.
 * Written as text (as featureJson): json_build_object per event and json_agg took a fifth more of the
 * statement's execution for a page of 100. Strings and numbers go through to_json (escapes, and
 * a non-finite coordinate as a JSON string, as json_build_object wrote it); `data` is jsonb's text.
 * Each event and its dataset are looked up by key, one by one (`offset 0` keeps the subqueries as
 * they are): a generic plan takes a page for a tenth of the rows it limits (LIMIT is a parameter)
 * and joined 100,000 of them to the whole events table, half a second a page.
 */
function pageJson(sort: Sort): Fragment {
  return sqlText`
    select coalesce('[' || string_agg(
             '{"id":' || e.id
             || ',"dataset":{"id":' || e.dataset_id || ',"title":' || to_json(d.title)::text
             || ',"catalog":' || to_json(d.slug)::text
             || '},"data":' || e.data::text
             || ',"location":' || case when e.location is null then 'null'
                  else '{"longitude":' || to_json(st_x(e.location))::text
                       || ',"latitude":' || to_json(st_y(e.location))::text || '}' end
             || ',"eventTimestamp":"' || to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
             || '","isValid":' || case when e.is_valid then 'true' else 'false' end || '}',
             ',' order by ${orderBy(sort)}) || ']', '[]')
    from page p
    cross join lateral (select e.id, e.dataset_id, e.data, e.location, e.event_timestamp, e.is_valid
                        from events e where e.id = p.id offset 0) e
    cross join lateral (select d.title, c.slug from datasets d join catalogs c on c.id = d.catalog_id
                        where d.id = e.dataset_id offset 0) d`;
}

/**
 * Whether the /events page statement (without bounds) may run with its generic plan: sorted by time
 * (the time index gives the order), over everything or a large catalog (Scope.genericPage), so that
 * whatever the window and page the generic plan reads what a custom one would: the newest entries of
 * the time index within the window, and the counts and partial days of the total through their keys.
 * Other filters (datasets, what a viewer may not see, small catalogs) and sorts keep custom plans:
 * their best index depends on how many events the filter holds.
 */
function genericPlanPage(scope: Scope, filter: EventFilter, sort: Sort): boolean {
  return (
    scope.genericPage && filter.dateField.kind === 'eventTimestamp' && sort.key.field === 'eventTimestamp'
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

/** The filter as conditions on `events e`, with `dates` for the date range. */
function rawConditions(
  scope: Scope,
  filter: EventFilter,
  dates: { from: string | null; to: string | null },
): Fragment {
  const conditions: Fragment[] = [sqlText`true`];
  // A whole catalog by its denormalised column, which the (catalog_id, event_timestamp) index serves.
  if (scope.catalogId !== null) conditions.push(sqlText`e.catalog_id = ${scope.catalogId}`);
  else if (scope.datasetIds !== null) conditions.push(sqlText`e.dataset_id = any(${scope.datasetIds})`);
  if (filter.bounds) {
    const { north, south } = filter.bounds;
    // The box as plain comparisons on the coordinates plus the equivalent cell-index range: the
    // covering index on grid_x then answers it without visiting rows (an && test would steer the
    // planner to the spatial index and the heap).
    const boxes = longitudeRanges(filter.bounds).map((range) => {
      const grid = gridRange({ north, south, west: range.west, east: range.east });
      return sqlText`(e.grid_x between ${grid.x0} and ${grid.x1} and e.grid_y between ${grid.y0} and ${grid.y1}
        and st_x(e.location) between ${range.west} and ${range.east}
        and st_y(e.location) between ${south} and ${north})`;
    });
    conditions.push(boxes.length === 1 ? (boxes[0] as Fragment) : sqlText`(${joinSql(boxes, ' or ')})`);
  }
  const date = dateExpr(filter);
  if (dates.from !== null) conditions.push(sqlText`${date} >= ${dates.from}::timestamptz`);
  if (dates.to !== null) conditions.push(sqlText`${date} < ${dates.to}::timestamptz`);
  return allOf(conditions);
}

function orderBy(sort: Sort): Fragment {
  const direction = sort.descending ? sqlText`desc` : sqlText`asc`;
  const key = sort.key;
  const expression =
    key.field === 'data'
      ? sqlText`e.data #> ${sql.array(key.path, 'text')}`
      : key.field === 'eventTimestamp'
        ? sqlText`e.event_timestamp`
        : key.field === 'isValid'
          ? sqlText`e.is_valid`
          : key.field === 'dataset'
            ? sqlText`e.dataset_id`
            : sqlText`e.id`;
  if (key.field === 'id') return sqlText`e.id ${direction}`;
  // Ties are broken by id in the same direction, so that pages are stable and the default sort
  // walks the (event_timestamp desc, id desc) index.
  return sqlText`${expression} ${direction}, e.id ${direction}`;
}

/** The lon/lat box of a cell (a hair larger; the exact test is on the cell indices). */
function cellEnvelope(cx: Fragment, cy: Fragment, level: number): Fragment {
  const size = 2 ** level;
  return sqlText`st_makeenvelope(
    ${cx}::float8 * ${360 / size}::float8 - 180 - 1e-9,
    case when ${cy} = ${size - 1} then -90 else degrees(atan(sinh(pi() * (1 - 2 * (${cy} + 1)::float8 / ${size})))) - 1e-9 end,
    (${cx} + 1)::float8 * ${360 / size}::float8 - 180 + 1e-9,
    case when ${cy} = 0 then 90 else degrees(atan(sinh(pi() * (1 - 2 * ${cy}::float8 / ${size})))) + 1e-9 end,
    4326)`;
}

function later(a: string | null, b: string): string {
  return a !== null && a > b ? a : b;
}

function earlier(a: string | null, b: string): string {
  return a !== null && a < b ? a : b;
}

import type { CommonQueryMethods } from 'slonik';
import { type Static, Type } from 'typebox';
import { datasetVisibility, viewerCacheIdentity } from '../../../domain/access.ts';
import { FINE_CELLS_MIN_DENSITY, fineCellsPayOff } from '../../../domain/read/fine-cells.ts';
import { type ScopeFacts, scopeFacts } from './answer-path.ts';
import type { EventFilter } from '../../../domain/read/read-query.ts';
import type { Viewer } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { joinSql, type Sql, sqlText, typed } from '../sql-text.ts';
import { visibleDatasetCondition, writableDatasetCondition } from '../visibility.ts';
import { sharedWork } from '../query-cancellation.ts';
import { dataSignature, SCOPE_VERSION } from './data-version.ts';

// Which datasets a read may see: the scope row resolved in the database, remembered per viewer and
// filter, and the facts of it that choose the answer path (src/adapters/postgres/read/answer-path.ts).

type Fragment = Sql;

type ScopeFilter = Pick<EventFilter, 'catalog' | 'datasets'>;

/**
 * Which datasets a query may read: datasetIds null means every dataset, with no condition at all;
 * otherwise an `array(select ...)` of their ids, resolved inside the query itself (no extra round
 * trip). The facts (ScopeFacts) are what the answer-path policy needs.
 */
export type Scope = ScopeFacts & {
  datasetIds: Fragment | null;
  /** Set when the filter is exactly one catalog: its id, for the per-catalog total rows. */
  catalogId: Fragment | null;
  /**
   * The readable datasets whose locations the viewer sees generalised (location privacy, set and
   * not writable by the viewer), as an int8[]; null when none (private-locations.ts).
   */
  generalised: Fragment | null;
};

const CountTablesRow = row(Type.Object({ density: Nullable(Type.Number()), day_cells: Type.Boolean() }));

/**
 * What a viewer may see, as a condition on `datasets d` joined to `catalogs c`; null when the viewer
 * may see everything (admins), so their queries carry no condition at all. The rule is the one of
 * src/domain/access.ts, shared with the collections API and the dashboard.
 */
export function visibility(viewer: Viewer): Fragment | null {
  if (datasetVisibility(viewer).kind === 'all') return null;
  return sqlText`${visibleDatasetCondition(viewer, { dataset: 'd', catalog: 'c' })}`;
}

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
  /** The readable datasets with location privacy that the viewer may not write. */
  generalised: Type.Array(Type.Number()),
});
type ScopeRecord = Static<typeof ScopeRecord>;
const ScopeRow = row(ScopeRecord);

const SCOPE_VERSION_SQL: Fragment = sqlText`${SCOPE_VERSION}`;

function scopeKey(viewer: Viewer, filter: ScopeFilter): string {
  return JSON.stringify([viewerCacheIdentity(viewer), filter.catalog, filter.datasets]);
}

/** A viewer who may read every dataset and a filter that names none. */
function seesEverything(viewer: Viewer, filter: ScopeFilter): boolean {
  // The rule's kind, not the condition: building the condition to test it for null cost a few
  // Slonik fragments on every page.
  return datasetVisibility(viewer).kind === 'all' && !filter.catalog && filter.datasets.length === 0;
}

/**
 * One row over the datasets the filter names: the ids of those the viewer may read, how many it
 * may not, a catalog id, and whether any of them has its counts pending. When the viewer may read
 * everything and the filter names nothing, only the last (through a partial index of the pending
 * datasets: an empty index, as a rule). Who sees what is the rule of visibility.ts.
 */
function scopeQuery(viewer: Viewer, filter: ScopeFilter): Fragment {
  const visible = visibility(viewer);
  if (seesEverything(viewer, filter))
    return sqlText`
      select '{}'::int8[] as ids, 0::int8 as hidden, null::int8 as catalog_id,
             exists (select 1 from datasets where counts_pending) as pending, ${SCOPE_VERSION_SQL} as signature,
             1::float8 as share, '{}'::int8[] as generalised`;
  const conditions = [sqlText`true`];
  if (filter.catalog) conditions.push(sqlText`c.slug = ${filter.catalog}`);
  if (filter.datasets.length > 0)
    conditions.push(sqlText`d.slug = any(${sql.array(filter.datasets, 'text')})`);
  const allowed = visible ? sqlText`coalesce(${visible}, false)` : sqlText`true`;
  const exact = sqlText`coalesce(${writableDatasetCondition(viewer, { dataset: 'd', catalog: 'c' })}, false)`;
  const years = (dataset: Fragment) =>
    sqlText`coalesce((select sum(k.event_count) from event_counts k where k.grain = 'y' and k.dataset_id = ${dataset}), 0)::float8`;
  const share =
    filter.catalog && filter.datasets.length === 0
      ? sqlText`${years(sqlText`-r.catalog_id`)} / greatest(${years(sqlText`0`)}, 1)`
      : sqlText`0::float8`;
  return sqlText`
    select ids, hidden, catalog_id, pending, ${SCOPE_VERSION_SQL} as signature, ${share} as share, generalised
    from (select coalesce(array_agg(d.id order by d.id) filter (where ${allowed}), '{}')::int8[] as ids,
                 coalesce(array_agg(d.id order by d.id) filter (where ${allowed} and d.privacy_cell_metres is not null
                                                              and not ${exact}), '{}')::int8[] as generalised,
                 count(*) filter (where not ${allowed})::int8 as hidden,
                 min(c.id)::int8 as catalog_id,
                 coalesce(bool_or(d.counts_pending) filter (where ${allowed}), false) as pending
          from datasets d join catalogs c on c.id = d.catalog_id
          where ${joinSql(conditions, ' and ')}) r`;
}

const VersionRow = row(Type.Object({ version: Type.String() }));

/**
 * The data version of what a viewer may read with a filter's catalog and datasets, as one text: the
 * data signature (data-version.ts) of the readable datasets and their ids, prefixed by the
 * database's identity (its oid and name), so that files kept for one database are never taken for
 * another's in a shared directory. Two reads with the same version and the same filter give the
 * same events; the materialised exports are keyed by it (export.ts). A database restored to an
 * earlier point reuses versions: its export directory is emptied with it (docs/operations.md).
 */
export function readDataVersion(
  connection: Pick<CommonQueryMethods, 'one'>,
  viewer: Viewer,
  filter: ScopeFilter,
): Promise<string> {
  const everything = seesEverything(viewer, filter);
  return connection
    .one(
      typed(VersionRow)`select (select oid::text from pg_database where datname = current_database())
        || '/' || current_database() || '/' || ${dataSignature(everything ? null : sql.fragment`s.ids`)} || ':'
        || ${everything ? sqlText`'*'` : sqlText`array_to_string(s.ids, ',')`}
        || case when cardinality(s.generalised) > 0 then ':g' || array_to_string(s.generalised, ',') else '' end as version
      from (${scopeQuery(viewer, filter)}) s`,
    )
    .then((found) => found.version);
}

/** Scopes of one reader: resolved, shared while in flight, remembered for the /events page. */
export type ScopeResolver = {
  /** The scope of a read; calls in flight for the same viewer and filter share one resolution. */
  scopeOf(viewer: Viewer, filter: ScopeFilter): Promise<Scope>;
  /**
   * Runs a page statement with the scope's check; when the scope changed since it was remembered,
   * resolves it again and runs the statement again.
   */
  withVerifiedScope<T>(viewer: Viewer, filter: ScopeFilter, run: ScopedStatement<T>): Promise<T>;
};

/**
 * A page statement run with a scope and its check (`verify`); it gives its value and the
 * signatures its statements read.
 */
type ScopedStatement<T> = (
  scope: Scope,
  verify: Fragment,
  /** The datasets the scope names (null: all) and the signature the check must give. */
  known: { ids: number[] | null; signature: string | null },
) => Promise<{ value: T; signatures: Array<string | null> }>;

export function scopeResolver(pool: DatabasePool, options: { fineCellsMinDensity?: number }): ScopeResolver {
  const minDensity = options.fineCellsMinDensity ?? FINE_CELLS_MIN_DENSITY;
  /**
   * What the count tables with a mode allow, read at most once a minute (migrations 0969, 0970): a
   * draining table is still whole but about to be emptied, an 'off' one is empty, so only a 'kept'
   * one is read. `density`: events per level-16 cell row, from the table statistics, null unless
   * kept; `dayCells`: the day cells kept.
   */
  let countTables = { density: null as number | null, dayCells: false, readAt: Number.NEGATIVE_INFINITY };
  async function countTablesNow(): Promise<{ density: number | null; dayCells: boolean }> {
    if (performance.now() - countTables.readAt > 60_000) {
      // reltuples is -1 until a table is first analysed: then no density, the rows answer.
      const found = await pool.one(typed(CountTablesRow)`
        select case when (select mode from count_table_modes where count_table = 'event_fine_cell_counts') = 'kept'
                    then coalesce((select reltuples from pg_class where oid = 'events'::regclass)
                                  / nullif((select reltuples from pg_class where oid = 'event_fine_cell_counts'::regclass), 0), 0)
                    end::float8 as density,
               coalesce((select mode = 'kept' from count_table_modes where count_table = 'event_cell_day_counts'), false) as day_cells`);
      countTables = { density: found.density, dayCells: found.day_cells, readAt: performance.now() };
    }
    return countTables;
  }

  // Use cases ask for several things at once (a histogram: its range and its per-dataset counts);
  // calls in flight at the same time for the same viewer and filter share one resolution.
  const resolving = new Map<string, Promise<Scope>>();
  function scopeOf(viewer: Viewer, filter: ScopeFilter): Promise<Scope> {
    const key = scopeKey(viewer, filter);
    const pending = resolving.get(key);
    if (pending) return pending;
    // Shared by every request in flight for this key: a request whose client goes away must not
    // take the others down with it (query-cancellation.ts, sharedWork).
    const scope = sharedWork(() => resolveScope(viewer, filter)).finally(() => resolving.delete(key));
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
  const REMEMBERED_LIMIT = 1000;

  async function resolveScope(viewer: Viewer, filter: ScopeFilter): Promise<Scope> {
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
    filter: ScopeFilter,
  ): Promise<{ scope: Scope; verify: Fragment; signature: string; ids: number[] | null }> {
    const key = scopeKey(viewer, filter);
    let known = remembered.get(key);
    if (!known) {
      known = await readScope(scopeQuery(viewer, filter));
      remember(key, known);
    }
    return {
      scope: await toScope(known, filter),
      verify: SCOPE_VERSION_SQL,
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

  async function withVerifiedScope<T>(
    viewer: Viewer,
    filter: ScopeFilter,
    run: ScopedStatement<T>,
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
   * The scope from the datasets row, its facts decided by scopeFacts (src/adapters/postgres/read/answer-path.ts):
   * with no filter and nothing hidden from the viewer, no condition at all, so that the totals rows
   * (dataset_id 0) answer. When the rule hides none of the datasets the filter names (every public
   * catalog for an anonymous caller), the request is answered exactly as for an admin, from the
   * overall or per-catalog totals; when it hides some, from the per-dataset rows of the visible
   * ones. The count tables' modes and statistics are read only when the scope allows their cells.
   */
  async function toScope(resolved: ScopeRecord, filter: ScopeFilter): Promise<Scope> {
    const facts = scopeFacts(
      {
        hidden: resolved.hidden,
        catalogId: resolved.catalog_id,
        pending: resolved.pending,
        share: resolved.share,
        generalised: resolved.generalised.length > 0,
      },
      filter,
    );
    const tables = facts.fineCells || facts.dayCells ? await countTablesNow() : null;
    const fineCells = facts.fineCells && fineCellsPayOff(tables?.density ?? null, minDensity);
    const dayCells = facts.dayCells && tables?.dayCells === true;
    const generalised =
      resolved.generalised.length > 0 ? sqlText`${sql.array(resolved.generalised, 'int8')}` : null;
    if (facts.allDatasets)
      return { ...facts, fineCells, dayCells, datasetIds: null, catalogId: null, generalised };
    return {
      ...facts,
      generalised,
      fineCells,
      dayCells,
      datasetIds: sqlText`${sql.array(resolved.ids, 'int8')}`,
      catalogId: facts.wholeCatalog ? sqlText`${resolved.catalog_id}::int8` : null,
    };
  }

  return { scopeOf, withVerifiedScope };
}

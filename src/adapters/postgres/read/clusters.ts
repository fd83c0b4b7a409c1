import { Type } from 'typebox';
import { readsFineCells } from './answer-path.ts';
import { FINE_LEVEL, GRID_LEVEL, MAX_EVENT_IDS } from '../../../domain/read/clustering.ts';
import type { EventFilter } from '../../../domain/read/read-query.ts';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { type Sql, sqlText, typed } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import { fineCellParts } from './fine-cells.ts';
import { countParts } from './parts.ts';
import { cellEnvelope, rawConditions, unionParts } from './rows.ts';
import type { Scope, ScopeResolver } from './scope.ts';

// Map clusters: GeoJSON features per grid cell (or exact location) and their size percentiles.

type Fragment = Sql;

const FeaturesRow = row(Type.Object({ features: Type.String() }));
const PercentilesRow = row(Type.Object({ values: Type.Union([Type.Array(Type.Number()), Type.Null()]) }));

export function clusterReads(
  pool: DatabasePool,
  scopes: ScopeResolver,
): Pick<EventReader, 'clusterFeatures' | 'clusterSizePercentiles'> {
  return {
    async clusterFeatures(viewer, filter, level) {
      const scope = await scopes.scopeOf(viewer, filter);
      const groups = level === null ? locationGroups(scope, filter) : cellGroups(scope, filter, level);
      // Materialized: the groups are computed once (inlined, each use of g.ids below would repeat,
      // and plan again, its look-up of small cells' ids).
      return pool.oneFirst(typed(FeaturesRow)`
        with g as materialized (${groups})
        select coalesce('[' || string_agg(${featureJson(sqlText`g`)}, ',') || ']', '[]') as features
        from g`);
    },

    async clusterSizePercentiles(viewer, filter, level, fractions) {
      const scope = await scopes.scopeOf(viewer, filter);
      const groups =
        level === null
          ? sqlText`select count(*) as count from ${eventsFrom(scope)} e
              where e.location is not null and ${rawConditions(scope, filter, filter.dates)}
              group by st_x(e.location), st_y(e.location)`
          : cellQuery(scope, filter, level);
      const values = await pool.oneFirst(typed(PercentilesRow)`
        select percentile_disc(${sql.array(fractions, 'float8')}) within group (order by count)::int8[] as values
        from (${groups}) g`);
      return values;
    },
  };
}

/**
 * Zoom 16 and deeper: one group per exact location, as (key, lon, lat, count, ids, gx, gy): ids
 * ascending when ten or fewer, else null; gx, gy the location's grid position. The one grouping of
 * /events/geo and the vector tiles (which narrow the rows to a tile with `within`, and fall back
 * to the grid cells of gx, gy when a tile holds too many locations), so both group alike.
 */
export function locationGroups(
  scope: Scope,
  filter: EventFilter,
  within: Fragment = sqlText`true`,
): Fragment {
  return sqlText`
      select 'cluster:p:' || st_x(e.location) || ':' || st_y(e.location) as key,
             st_x(e.location) as lon, st_y(e.location) as lat, count(*)::int8 as count,
             case when count(*) <= ${MAX_EVENT_IDS} then array_agg(e.id order by e.id) end as ids,
             min(e.grid_x) as gx, min(e.grid_y) as gy
      from ${eventsFrom(scope)} e
      where e.location is not null and ${rawConditions(scope, filter, filter.dates)} and ${within}
      group by st_x(e.location), st_y(e.location)`;
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
 * Clusters at a grid level as (key, cx, cy, lon, lat, count, ids): counts and centroids per cell, and the ids
 * (ascending) of cells of ten or fewer events, gathered from the parts that carry them (the rows'
 * ids as integers, the level-16 counts' lists as text); a cell whose ids are not all there (counted
 * from the level-10 counts, or a level-16 cell that lost its list) reads them from its events.
 *
 * The parts come sorted by cell to a GroupAggregate: as arrays, in a hash table PostgreSQL assumed
 * 8 kB per cell and spilled it to disk, and the level-16 lists unnested gave 30k rows for a city at
 * zoom 10 with 1M events where 12k counts would do. The lists are sorted per small cell only. At
 * level 16 itself (zoom 12-13) the inner level-16 cells are clusters as they are, and only the rows
 * of the edge cells (never the same cells) are grouped.
 */
export function cellGroups(scope: Scope, filter: EventFilter, level: number): Fragment {
  const shift = GRID_LEVEL - level;
  const small = (count: Fragment, ids: Fragment) =>
    sqlText`case when ${count} <= ${MAX_EVENT_IDS} then (select array_agg(i order by i) from unnest(${ids}) i) end`;
  // The rows' ids stay integers and arrive sorted (the parts are sorted by cell, then id), so their
  // aggregate is the cell's ascending list; only a cell that also has a level-16 list (text) merges
  // and sorts the two. Every id as text, joined, split and sorted again per small cell cost about a
  // fifth of a zoom-10 city view read from the rows; an ordered aggregate (`order by id`) set up a
  // sort in every cell, lists or not (docs/performance.md, "Map clusters: the small cells' ids as integers").
  const grouped = (parts: Fragment[]) => sqlText`
    select cx, cy, count, lon, lat,
           case when lists is null then row_ids
                else ${small(sqlText`count`, sqlText`array_cat(row_ids, string_to_array(lists, ',')::int8[])`)} end as known
    from (select cx, cy, sum(n)::int8 as count, sum(slon) / sum(n) as lon, sum(slat) / sum(n) as lat,
                 case when sum(n) <= ${MAX_EVENT_IDS} then array_agg(id) filter (where id is not null) end as row_ids,
                 case when sum(n) <= ${MAX_EVENT_IDS} then string_agg(lists, ',') end as lists
          from (select * from (${unionParts(parts)}) u order by cx, cy, id) p
          group by cx, cy) g`;
  const rows = (part: Fragment) =>
    sqlText`select cx, cy, n, slon, slat, id, null::text as lists from (${part}) r`;
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
                       f.sum_lon as slon, f.sum_lat as slat, null::int8 as id,
                       case when f.event_count <= ${MAX_EVENT_IDS} then nullif(array_to_string(f.ids, ','), '') end as lists
                from event_fine_cell_counts f where ${inside}`,
            ),
            ...fine.rows.map(rows),
          ]);
  }
  return sqlText`
    with c as materialized (${clusters})
    select 'cluster:' || ${level}::int4 || ':' || c.cx || ':' || c.cy as key, c.cx, c.cy, c.lon, c.lat, c.count,
           case when c.count > ${MAX_EVENT_IDS} then null
                when cardinality(c.known) = c.count then c.known
                else (select coalesce(array_agg(e.id order by e.id), '{}') from ${eventsFrom(scope)} e
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

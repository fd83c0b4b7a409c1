import { Type } from 'typebox';
import { GRID_LEVEL } from '../../../domain/read/clustering.ts';
import type { EventFilter } from '../../../domain/read/read-query.ts';
import {
  crowdedTileLevel,
  type Tile,
  TILE_EXTENT,
  TILE_LAYER,
  TILE_MAX_POINTS,
  tileClusterLevel,
  tileReadBounds,
  tileShift,
} from '../../../domain/read/tiles.ts';
import type { TileReader } from '../../../ports/read/tile-reader.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { type Sql, sqlText, typed } from '../sql-text.ts';
import { cellGroups, locationGroups } from './clusters.ts';
import type { Scope, ScopeResolver } from './scope.ts';
import { dataSignature, urlVersion } from './data-version.ts';

// Vector tiles: the clusters /api/v1/events/geo gives at the tile's zoom (the same groups, built by
// the same answer paths: precomputed cell counts at low zoom, rows where they must), kept when their
// cell lies in the tile and encoded by PostGIS (ST_AsMVTGeom, ST_AsMVT) in the same statement.

type Fragment = Sql;

const TileRow = row(Type.Object({ tile: Type.Unsafe<Uint8Array>({}) }));
const VersionRow = row(Type.Object({ version: Type.String() }));

/** Web Mercator's latitude limit: a pole-ward event is drawn on the edge of the map, as the grid files it. */
const MERCATOR_LATITUDE = 85.0511287798;

export function tileReads(
  pool: DatabasePool,
  scopes: ScopeResolver,
  options: { maxPoints?: number } = {},
): TileReader {
  const maxPoints = options.maxPoints ?? TILE_MAX_POINTS;
  return {
    async vectorTile(viewer, filter, tile) {
      const scope = await scopes.scopeOf(viewer, filter);
      const tileFilter: EventFilter = { ...filter, bounds: tileReadBounds(tile) };
      const level = tileClusterLevel(tile.z);
      const groups =
        level === null
          ? tileLocationGroups(scope, tileFilter, tile, maxPoints)
          : tileCells(scope, tileFilter, tile, level);
      return pool.oneFirst(typed(TileRow)`
        with g as materialized (${groups})
        select coalesce((select st_asmvt(f, ${TILE_LAYER}, ${TILE_EXTENT}, 'geom') from (${features(tile)}) f), ''::bytea) as tile`);
    },
    async dataVersion() {
      // Every dataset's: a tile's visibility depends on the viewer and its filter, and one version
      // for all keeps the check one small read (a change anywhere gives every tile a new URL).
      const signature = await pool.oneFirst(sql.type(VersionRow)`select ${dataSignature(null)} as version`);
      return urlVersion(signature);
    },
  };
}

/** The clusters of the level whose cell lies in the tile (the read box is a hair larger). */
function tileCells(scope: Scope, filter: EventFilter, tile: Tile, level: number): Fragment {
  const shift = tileShift(tile, level);
  return sqlText`
    select c.key, c.lon, c.lat, c.count, c.ids from (${cellGroups(scope, filter, level)}) c
    where c.cx >> ${shift} = ${tile.x} and c.cy >> ${shift} = ${tile.y}`;
}

/**
 * Zoom 16 and deeper: one group per exact location in the tile, as /events/geo groups them
 * (`locationGroups`); a tile with more than `maxPoints` (TILE_MAX_POINTS) locations is clustered on
 * the cells of crowdedTileLevel instead, which bounds its size.
 */
function tileLocationGroups(scope: Scope, filter: EventFilter, tile: Tile, maxPoints: number): Fragment {
  const shift = tileShift(tile);
  const crowdedShift = GRID_LEVEL - crowdedTileLevel(tile);
  const crowdedLevel = crowdedTileLevel(tile);
  const inTile = sqlText`e.grid_x between ${tile.x * 2 ** shift} and ${(tile.x + 1) * 2 ** shift - 1}
        and e.grid_y between ${tile.y * 2 ** shift} and ${(tile.y + 1) * 2 ** shift - 1}`;
  return sqlText`
    with p as materialized (${locationGroups(scope, filter, inTile)}),
    crowded as (select count(*) > ${maxPoints} as yes from p)
    select p.key, p.lon, p.lat, p.count, p.ids
    from p where not (select yes from crowded)
    union all
    select 'cluster:' || ${crowdedLevel}::int4 || ':' || c.cx || ':' || c.cy,
           sum(c.lon * c.count) / sum(c.count), sum(c.lat * c.count) / sum(c.count), sum(c.count)::int8, null::int8[]
    from (select p.gx >> ${crowdedShift} as cx, p.gy >> ${crowdedShift} as cy, p.lon, p.lat, p.count
          from p where (select yes from crowded)) c
    group by c.cx, c.cy`;
}

/**
 * The groups `g` (key, lon, lat, count, ids) as MVT features: a single event is an `event-point`
 * with its id and title, any other group an `event-cluster` with its count, its key and, when ten
 * or fewer, its ids as text (`eventIds`, comma-separated: MVT values are scalars). Every feature
 * carries `count`, so that a client adds them up as it adds up /events/geo's.
 */
function features(tile: Tile): Fragment {
  const single = sqlText`(g.count = 1 and cardinality(g.ids) = 1)`;
  const latitude = sqlText`greatest(${-MERCATOR_LATITUDE}::float8, least(${MERCATOR_LATITUDE}::float8, g.lat))`;
  return sqlText`
    select st_asmvtgeom(st_transform(st_setsrid(st_makepoint(g.lon, ${latitude}), 4326), 3857),
                        st_tileenvelope(${tile.z}::int4, ${tile.x}::int4, ${tile.y}::int4), ${TILE_EXTENT}::int4, 0, false) as geom,
           case when ${single} then 'event-point' else 'event-cluster' end as type,
           g.count,
           case when ${single} then g.ids[1] end as id,
           case when ${single} then coalesce((select t.title from events t where t.id = g.ids[1]), '') end as title,
           case when not ${single} then g.key end as key,
           case when not ${single} and g.ids is not null then array_to_string(g.ids, ',') end as "eventIds"
    from g`;
}

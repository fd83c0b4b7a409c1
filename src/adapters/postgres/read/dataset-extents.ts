import { Type } from 'typebox';
import { cellRangeBounds, ROLLUP_LEVEL } from '../../../domain/read/clustering.ts';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { sqlText, typed } from '../sql-text.ts';
import { visibility } from './scope.ts';

// The extents of every readable dataset at once, for OGC API – Features' /collections (clients such
// as GDAL and QGIS take a layer's extent from that list, and page through the whole collection to
// compute it when it is missing). Exact boxes would read every row; the dataset's cell margins
// (migration 0966: its located events per column and row of level-10 cells, kept by the rollups)
// give the box rounded outward to whole cells, four probes of their key per dataset, and the
// dataset's time index its first and last instants.

const Cell = Type.Union([Type.Number(), Type.Null()]);
const Instant = Type.Union([Type.String(), Type.Null()]);

const ExtentRow = row(
  Type.Object({
    dataset_id: Type.Number(),
    x0: Cell,
    x1: Cell,
    y0: Cell,
    y1: Cell,
    first: Instant,
    last: Instant,
  }),
);

const ISO = sqlText`'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** The first (asc) or last (desc) column or row of level-10 cells holding events of dataset `d`. */
function edge(axis: 'x' | 'y', order: 'asc' | 'desc') {
  return sqlText`(select m.cell from dataset_cell_margins m where m.dataset_id = d.id and m.axis = ${axis}
                  order by m.cell ${order === 'asc' ? sqlText`asc` : sqlText`desc`} limit 1)`;
}

export function datasetExtentReads(pool: DatabasePool): Pick<EventReader, 'datasetExtents'> {
  return {
    async datasetExtents(viewer) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const rows = await pool.any(typed(ExtentRow)`
        select d.id as dataset_id, cells.x0, cells.x1, cells.y0, cells.y1,
               to_char((select min(e.event_timestamp) from events e where e.dataset_id = d.id) at time zone 'UTC', ${ISO}) as first,
               to_char((select max(e.event_timestamp) from events e where e.dataset_id = d.id) at time zone 'UTC', ${ISO}) as last
        from datasets d join catalogs c on c.id = d.catalog_id
        left join lateral (
          select ${edge('x', 'asc')} as x0, ${edge('x', 'desc')} as x1, ${edge('y', 'asc')} as y0, ${edge('y', 'desc')} as y1
          where not d.counts_pending
        ) cells on true
        where ${visible}`);
      return rows.map((r) => ({
        datasetId: r.dataset_id,
        bounds:
          r.x0 === null || r.x1 === null || r.y0 === null || r.y1 === null
            ? null
            : cellRangeBounds({ x0: r.x0, x1: r.x1, y0: r.y0, y1: r.y1 }, ROLLUP_LEVEL),
        first: r.first,
        last: r.last,
      }));
    },
  };
}

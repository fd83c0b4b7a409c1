import { FINE_LEVEL, innerCellRange } from '../../../domain/read/clustering.ts';
import { type EventFilter, longitudeRanges } from '../../../domain/read/read-query.ts';
import { type Sql, sqlText } from '../sql-text.ts';
import { edgeStrips, rawPart } from './rows.ts';
import type { Scope } from './scope.ts';

// The level-16 cell counts (event_fine_cell_counts, totals only) of unfiltered map views at zoom
// 9-13: when they answer is readsFineCells in src/adapters/postgres/read/answer-path.ts.

type Fragment = Sql;

/**
 * An unfiltered view at zoom 9-13 (see readsFineCells): per longitude range of its box, the level-16
 * cells wholly inside it, as a condition on event_fine_cell_counts `f`, and the rows of the rest
 * (the edge cells, or the whole range when no cell fits inside), as parts.
 */
export function fineCellParts(filter: EventFilter, level: number): { cells: Fragment[]; rows: Fragment[] } {
  const bounds = filter.bounds;
  if (!bounds) throw new Error('fineCellParts needs bounds');
  const cells: Fragment[] = [];
  const rows: Fragment[] = [];
  const none: Scope = {
    allDatasets: true,
    wholeCatalog: false,
    datasetIds: null,
    catalogId: null,
    fineCells: true,
    dayCells: false,
    countsPending: false,
    largeShare: false,
    generalised: null,
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
export function fineCellCounts(filter: EventFilter, level: number): Fragment[] {
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

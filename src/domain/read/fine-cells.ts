// The level-16 cell counts (event_fine_cell_counts, migrations 0210 and 0969): when a view reads
// them, and when they are kept at all (docs/scaling.md, "Step 3"). Pure: the read adapter asks
// fineCellsPayOff per scope; the schedule manager's minute task applies fineCellsMove.

/**
 * Unfiltered map views at zoom 9-13 read event_fine_cell_counts when it holds at least this many
 * events per row on average (PostgreSQL's table statistics); below, a view's rows are about as many
 * as its cell rows and cheaper to read. Since the table is kept in key order (migration 0236), two
 * events per row (1M benchmark events) pay: zoom 10 views took half the time of the rows, zoom 12
 * about the same.
 */
export const FINE_CELLS_MIN_DENSITY = 1.5;

/**
 * Whether the level-16 cell counts pay at this density (events per row; null while the table is not
 * kept, migration 0969: never); minimum 0: whenever kept.
 */
export function fineCellsPayOff(density: number | null, minDensity: number): boolean {
  return density !== null && (minDensity <= 0 || density >= minDensity);
}

/**
 * The table's mode (migration 0969): `kept` is written and read, `draining` still written but no
 * longer read, `off` empty and neither.
 */
type FineCellsMode = 'kept' | 'draining' | 'off';

/** What the switch knows of the table when it decides. */
export type FineCellsState = {
  mode: FineCellsMode;
  /** When the mode last changed (the database's clock). */
  changedAt: Date;
  /**
   * Events per level-16 cell: while the table is written (kept, draining), from the table
   * statistics, as the readers compute it; while off, estimated from the distinct cells of the
   * events (extended statistics `events_level16_cells`). Null while the statistics do not know.
   */
  density: number | null;
  /** The events the statistics count (null: not yet analysed). */
  events: number | null;
};

/** A change of mode, each one of migration 0969's functions; null: stay. */
export type FineCellsMove = 'drain' | 'keep' | 'drop' | 'rebuild' | null;

/**
 * How long a drain lasts before the table may be dropped: longer than any process keeps a density
 * read while the table was kept (scope.ts reads it at most once a minute), so no reader still
 * reads a table that is emptied.
 */
export const FINE_CELLS_DRAIN_MS = 120_000;

/**
 * How long a dropped table stays off before it may be rebuilt. The estimate an off table is judged
 * by (PostgreSQL's distinct values of a sample) can err either way: should it say "dense" where
 * the counted table says "sparse", the table would be rebuilt, drained and dropped again; this
 * bounds that to one rebuild an hour (about 45 s of waiting writers at 10M events).
 */
export const FINE_CELLS_OFF_MS = 3_600_000;

/**
 * Below this many events the switch leaves the mode as it is: the table's writes cost little
 * there (about 0.25 s per import of 50,000 spread events) and small tables' statistics move with
 * every import.
 */
export const FINE_CELLS_SWITCH_MIN_EVENTS = 50_000;

/**
 * The switch's rule. Its thresholds are around the readers' `minDensity` so that a table is never
 * emptied while the readers would read it, and not rebuilt to be drained again at the next change
 * of the statistics:
 * - kept, and the density below 0.8 × minDensity (1.2): drain;
 * - draining, and the density back at minDensity (1.5) or more: keep (the table was written all
 *   along);
 * - draining for FINE_CELLS_DRAIN_MS, and the density still below 0.8 × minDensity: drop;
 * - off for FINE_CELLS_OFF_MS, and the estimated density at 4/3 × minDensity (2.0) or more:
 *   rebuild (the estimate from the events' distinct cells was 12 % under the count on real-shaped
 *   data, docs/scaling.md).
 * With minDensity 0 (the readers read the cells whenever kept) the table is always kept.
 */
export function fineCellsMove(
  state: FineCellsState,
  now: Date,
  options: { minDensity: number; minEvents: number },
): FineCellsMove {
  const { mode, density } = state;
  if (options.minDensity <= 0) return mode === 'draining' ? 'keep' : mode === 'off' ? 'rebuild' : null;
  if (density === null || state.events === null || state.events < options.minEvents) return null;
  // Compared as products: 0.8 × 1.5 is 1.2000000000000002 in floating point.
  const sparse = density * 5 < options.minDensity * 4;
  const age = now.getTime() - state.changedAt.getTime();
  if (mode === 'kept') return sparse ? 'drain' : null;
  if (mode === 'off')
    return density * 3 >= options.minDensity * 4 && age >= FINE_CELLS_OFF_MS ? 'rebuild' : null;
  if (density >= options.minDensity) return 'keep';
  return sparse && age >= FINE_CELLS_DRAIN_MS ? 'drop' : null;
}

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
  /** When the mode last changed, or an off table's cells were last counted (the database's clock). */
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
 * How long a dropped table stays off before it may be rebuilt, and how long after a count that
 * refuted a rebuild the cells are counted again (the switch's adapter counts them before any
 * rebuild, since an off table's density is an estimate from a sample that can err either way): at
 * most one rebuild, and one count of the events' cells (0.7 s per 1M events), an hour.
 */
export const FINE_CELLS_OFF_MS = 3_600_000;

/**
 * Below this many events the switch leaves the mode as it is: the table's writes cost little
 * there (about 0.25 s per import of 50,000 spread events) and small tables' statistics move with
 * every import.
 */
export const FINE_CELLS_SWITCH_MIN_EVENTS = 50_000;

/**
 * The switch's rule. The table is written only while the readers would read it, and the one
 * costly move, a rebuild, waits for a margin above the readers' minimum, so that a density near it
 * does not rebuild a table that is drained again at the next change of the statistics:
 * - kept, and the density below minDensity (1.5): drain (no reader reads it any more);
 * - draining, and the density back at minDensity or more: keep (the table was written all along);
 * - draining for FINE_CELLS_DRAIN_MS, and the density still below minDensity: drop;
 * - off for FINE_CELLS_OFF_MS, and the density at 4/3 × minDensity (2.0) or more: rebuild (asked
 *   with the estimated density first, then again with the counted one).
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
  // Below the readers' minimum no reader reads the table: writing it is wasted.
  const sparse = density < options.minDensity;
  const age = now.getTime() - state.changedAt.getTime();
  if (mode === 'kept') return sparse ? 'drain' : null;
  if (mode === 'off')
    // 4/3 of the minimum, compared as products (exact in floating point).
    return density * 3 >= options.minDensity * 4 && age >= FINE_CELLS_OFF_MS ? 'rebuild' : null;
  if (density >= options.minDensity) return 'keep';
  return sparse && age >= FINE_CELLS_DRAIN_MS ? 'drop' : null;
}

import type { FineCellsMove, FineCellsState } from '../../domain/read/fine-cells.ts';

/** What one pass of the switch did. */
export type FineCellsSwitchOutcome = {
  /** What the decision was made on; null when another switch was at work. */
  state: FineCellsState | null;
  move: FineCellsMove;
  /**
   * `moved`: the move was made; `stayed`: no move was asked for; `busy`: another switch was at
   * work, or the move had to wait for writers (or readers) longer than the switch waits: left to a
   * later pass.
   */
  result: 'moved' | 'stayed' | 'busy';
};

/** The mode of the level-16 cell counts (migration 0969; docs/scaling.md, "Step 3"). */
export interface FineCellsSwitch {
  /**
   * Reads the table's state, asks `decide` for a move and makes it, one switch at a time: the
   * state cannot change between the decision and the move. Before a rebuild, `decide` is asked
   * again with the density counted from the events (an off table's is an estimate); when the count
   * refutes it, the mode's time is moved to now.
   */
  switchFineCells(decide: (state: FineCellsState) => FineCellsMove): Promise<FineCellsSwitchOutcome>;
}

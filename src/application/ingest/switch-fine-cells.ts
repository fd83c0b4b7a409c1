import {
  FINE_CELLS_MIN_DENSITY,
  FINE_CELLS_SWITCH_MIN_EVENTS,
  fineCellsMove,
} from '../../domain/read/fine-cells.ts';
import type { Clock } from '../../ports/clock.ts';
import type { FineCellsSwitch, FineCellsSwitchOutcome } from '../../ports/ingest/fine-cells-switch.ts';

// The level-16 cell counts are written by every import and read only where they hold enough
// events per row (fineCellsPayOff). On spread-out data they hold about one: every import pays for
// a table no view reads. The schedule manager runs this every minute: it drains, drops and
// rebuilds the table by the domain's rule (fineCellsMove), so imports write it only while the
// data is dense enough for views to read it (docs/scaling.md, "Step 3").

export type FineCellsSwitchDeps = {
  cells: FineCellsSwitch;
  clock: Clock;
  /** The readers' minimum density (default FINE_CELLS_MIN_DENSITY, what the API's readers use). */
  minDensity?: number;
  /** Below this many events the mode stays as it is (default FINE_CELLS_SWITCH_MIN_EVENTS). */
  minEvents?: number;
};

/** One pass of the switch: the move the rule asks for, made. */
export function switchFineCells(deps: FineCellsSwitchDeps): Promise<FineCellsSwitchOutcome> {
  const rule = {
    minDensity: deps.minDensity ?? FINE_CELLS_MIN_DENSITY,
    minEvents: deps.minEvents ?? FINE_CELLS_SWITCH_MIN_EVENTS,
  };
  return deps.cells.switchFineCells((state) => fineCellsMove(state, deps.clock.now(), rule));
}

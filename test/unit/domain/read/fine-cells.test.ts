import t from 'tap';
import {
  FINE_CELLS_DRAIN_MS,
  FINE_CELLS_OFF_MS,
  fineCellsMove,
  fineCellsPayOff,
  type FineCellsState,
} from '../../../../src/domain/read/fine-cells.ts';

const changedAt = new Date('2026-11-30T10:00:00Z');
const at = (ms: number) => new Date(changedAt.getTime() + ms);
const state = (over: Partial<FineCellsState>): FineCellsState => ({
  mode: 'kept',
  changedAt,
  density: 1.5,
  events: 1_000_000,
  ...over,
});
const rule = { minDensity: 1.5, minEvents: 50_000 };

t.test('the readers read the level-16 cells while kept and dense enough', async (t) => {
  t.equal(fineCellsPayOff(2, 1.5), true, 'two events per level-16 row pay');
  t.equal(fineCellsPayOff(1.2, 1.5), false, 'about one per row: the rows are as cheap');
  t.equal(fineCellsPayOff(0, 0), true, 'minimum 0: whenever kept');
  t.equal(fineCellsPayOff(null, 0), false, 'not kept (draining or off): never, minimum 0 too');
  t.equal(fineCellsPayOff(null, 1.5), false);
});

t.test('a kept table is drained as soon as no reader reads it, and only then', async (t) => {
  t.equal(fineCellsMove(state({ density: 1.07 }), at(0), rule), 'drain', 'real-shaped data, 300,000 events');
  t.equal(fineCellsMove(state({ density: 1.24 }), at(0), rule), 'drain', 'real-shaped data, 1M events');
  t.equal(fineCellsMove(state({ density: 1.49 }), at(0), rule), 'drain');
  t.equal(fineCellsMove(state({ density: 1.5 }), at(0), rule), null, 'at the minimum: read, so kept');
  t.equal(fineCellsMove(state({ density: 4 }), at(0), rule), null);
});

t.test('a drain is undone when the data gets dense again, and dropped when it stays sparse', async (t) => {
  const draining = (density: number) => state({ mode: 'draining', density });
  t.equal(fineCellsMove(draining(1.5), at(0), rule), 'keep', 'dense enough to be read again');
  t.equal(fineCellsMove(draining(1.6), at(FINE_CELLS_DRAIN_MS * 10), rule), 'keep', 'whatever its age');
  t.equal(
    fineCellsMove(draining(1.0), at(FINE_CELLS_DRAIN_MS - 1), rule),
    null,
    'a process may still read it',
  );
  t.equal(
    fineCellsMove(draining(1.0), at(FINE_CELLS_DRAIN_MS), rule),
    'drop',
    'no process reads it any more',
  );
  t.equal(fineCellsMove(draining(1.49), at(FINE_CELLS_DRAIN_MS), rule), 'drop', 'just under the minimum');
});

t.test('an off table is rebuilt when the events are dense enough to be read', async (t) => {
  const off = (density: number | null) => state({ mode: 'off', density });
  const later = at(FINE_CELLS_OFF_MS);
  t.equal(fineCellsMove(off(2), later, rule), 'rebuild', '4/3 of the minimum');
  t.equal(fineCellsMove(off(2), at(FINE_CELLS_OFF_MS - 1), rule), null, 'within the hour after a drop');
  t.equal(fineCellsMove(off(1.99), later, rule), null, 'the estimate may be 12 % low: not yet');
  t.equal(fineCellsMove(off(1.5), later, rule), null, 'a rebuilt table would be drained again at once');
  t.equal(fineCellsMove(off(null), later, rule), null, 'no estimate: stays off');
});

t.test('the switch waits for statistics and for enough events', async (t) => {
  t.equal(fineCellsMove(state({ density: null }), at(0), rule), null, 'never analysed');
  t.equal(fineCellsMove(state({ density: 0.5, events: null }), at(0), rule), null);
  t.equal(fineCellsMove(state({ density: 0.5, events: 49_999 }), at(0), rule), null, 'a small installation');
  t.equal(fineCellsMove(state({ density: 0.5, events: 50_000 }), at(0), rule), 'drain');
  t.equal(fineCellsMove(state({ mode: 'off', density: 3, events: 10 }), at(FINE_CELLS_OFF_MS), rule), null);
});

t.test("with the readers' minimum 0 the table is always kept", async (t) => {
  const always = { minDensity: 0, minEvents: 50_000 };
  t.equal(fineCellsMove(state({ density: 0.1 }), at(0), always), null, 'never drained');
  t.equal(fineCellsMove(state({ mode: 'draining', density: 0.1 }), at(0), always), 'keep');
  t.equal(fineCellsMove(state({ mode: 'off', density: null, events: null }), at(0), always), 'rebuild');
});

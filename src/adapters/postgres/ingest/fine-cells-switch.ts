import { Type } from 'typebox';
import type { FineCellsMove, FineCellsState } from '../../../domain/read/fine-cells.ts';
import type { FineCellsSwitch, FineCellsSwitchOutcome } from '../../../ports/ingest/fine-cells-switch.ts';
import type { CommonQueryMethods } from 'slonik';
import { type DatabasePool, row, sql } from '../database.ts';
import { LOCK_NOT_AVAILABLE, sqlState } from '../sql-state.ts';

// The switch of the level-16 cells' mode (migration 0969) on PostgreSQL: the state read with the
// mode row locked, so that one switch runs at a time (a schedule-manager pass that outlasts its
// minute, an operator's call in psql) and the move is made on the state it was decided on. A pass
// that finds the row locked leaves the move to whoever holds it.

/**
 * How long the switch waits for a lock: the exclusive advisory lock of a drop or
 * rebuild (which waits for every open writer of events, a refresh of a large dataset among them,
 * while the writers that come after it wait behind it), the truncate's table lock. Past it the move
 * is left to the next minute rather than holding imports up.
 */
const SWITCH_LOCK_TIMEOUT = '5s';

/** A rebuild recounts every located event: about 45 s at 10M events (docs/scaling.md, "Step 3"). */
const SWITCH_STATEMENT_TIMEOUT = '15min';

const StateRow = row(
  Type.Object({
    mode: Type.Union([Type.Literal('kept'), Type.Literal('draining'), Type.Literal('off')]),
    changed_at: Type.String(),
    events: Type.Union([Type.Number(), Type.Null()]),
    density: Type.Union([Type.Number(), Type.Null()]),
  }),
);

const Done = row(Type.Object({ done: Type.Union([Type.Boolean(), Type.Null()]) }));

const MOVES: Record<Exclude<FineCellsMove, null>, string> = {
  drain: 'chronomap_fine_cells_drain',
  keep: 'chronomap_fine_cells_keep',
  drop: 'chronomap_fine_cells_drop',
  rebuild: 'chronomap_fine_cells_rebuild',
};

const Cells = row(Type.Object({ cells: Type.Number(), located: Type.Number() }));

/**
 * An off table's density is an estimate from a sample (0969's extended statistics): on the 1M
 * real-shaped events it counted 566,904 cells where there are 804,804 (density 1.76 for 1.24).
 * Before a rebuild the cells are counted (0.7 s per 1M events, no lock) and the rule asked again;
 * when the count refutes the estimate, the mode's time is moved to now, so that the next count is
 * an hour later (FINE_CELLS_OFF_MS) rather than every minute.
 */
async function countedBeforeRebuild(
  tx: CommonQueryMethods,
  state: FineCellsState,
  decide: (state: FineCellsState) => FineCellsMove,
): Promise<{ state: FineCellsState; move: FineCellsMove }> {
  // The located events over their cells: what the table would hold (counted, not the statistics,
  // which may be as old as the estimate).
  const found = await tx.one(sql.type(Cells)`
    select count(*)::float8 as cells, coalesce(sum(n), 0)::float8 as located
    from (select count(*) as n from events where location is not null group by grid_x >> 8, grid_y >> 8) c`);
  const counted = { ...state, density: found.cells > 0 ? found.located / found.cells : null };
  const move = decide(counted);
  if (move === 'rebuild') return { state: counted, move };
  await tx.query(sql.unsafe`
    update count_table_modes set changed_at = now() where count_table = 'event_fine_cell_counts'`);
  return { state: counted, move: null };
}

export function postgresFineCellsSwitch(pool: DatabasePool): FineCellsSwitch {
  return {
    async switchFineCells(decide): Promise<FineCellsSwitchOutcome> {
      let decided: { state: FineCellsState; move: FineCellsMove } | null = null;
      try {
        return await pool.transaction(async (tx) => {
          await tx.query(sql.unsafe`
            select set_config('lock_timeout', ${SWITCH_LOCK_TIMEOUT}, true),
                   set_config('statement_timeout', ${SWITCH_STATEMENT_TIMEOUT}, true)`);
          // The density as the readers compute it (scope.ts) while the table is written; while it
          // is off, the events over their distinct level-16 cells (0969's extended statistics,
          // kept by autovacuum's analyze of events; shown as {"-1, -2": <cells>}). Unknown
          // statistics (reltuples -1 before a first analyse) give null: the rule waits.
          const found = await tx.maybeOne(sql.type(StateRow)`
            with stats as (
              select (select reltuples from pg_class where oid = 'events'::regclass)::float8 as events,
                     (select reltuples from pg_class where oid = 'event_fine_cell_counts'::regclass)::float8 as cells,
                     (select substring(s.n_distinct::text from ':[[:space:]]*([0-9.]+)')::float8
                      from pg_stats_ext s
                      where s.statistics_name = 'events_level16_cells' and s.statistics_schemaname = current_schema()
                      limit 1) as distinct_cells
            )
            select m.mode, m.changed_at,
                   case when st.events >= 0 then st.events end as events,
                   case when st.events > 0 and c.cells > 0 then st.events / c.cells end as density
            from count_table_modes m
            cross join stats st
            cross join lateral (select case when m.mode = 'off' then st.distinct_cells else st.cells end as cells) c
            where m.count_table = 'event_fine_cell_counts'
            for update of m skip locked`);
          // Another switch holds the row (it is making a move): this pass leaves it to that one.
          if (found === null) return { state: null, move: null, result: 'busy' as const };
          const state: FineCellsState = {
            mode: found.mode,
            changedAt: new Date(found.changed_at),
            events: found.events,
            density: found.density,
          };
          const estimated = decide(state);
          const { state: decidedOn, move } =
            estimated === 'rebuild'
              ? await countedBeforeRebuild(tx, state, decide)
              : { state, move: estimated };
          decided = { state: decidedOn, move };
          if (move === null) return { state: decidedOn, move, result: 'stayed' as const };
          const done = await tx.oneFirst(sql.type(Done)`select ${sql.identifier([MOVES[move]])}() as done`);
          // Under the row lock the mode is the one read: a function refusing its move is a defect.
          if (done !== true) throw new Error(`${MOVES[move]}() refused the move from ${decidedOn.mode}`);
          return { state: decidedOn, move, result: 'moved' as const };
        });
      } catch (error) {
        if (sqlState(error) !== LOCK_NOT_AVAILABLE) throw error;
        const waited = decided as { state: FineCellsState; move: FineCellsMove } | null;
        return { state: waited?.state ?? null, move: waited?.move ?? null, result: 'busy' };
      }
    },
  };
}

import { Type } from 'typebox';
import { histogramGrain } from './answer-path.ts';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { type Sql, sqlText, typed } from '../sql-text.ts';
import { countParts } from './parts.ts';
import { unionParts } from './rows.ts';
import type { ScopeResolver } from './scope.ts';

// The histogram: the parts' counts per bin (fixed-size or calendar bins), binned by the database.

type Fragment = Sql;

const BinRow = row(Type.Object({ bin: Type.Number(), count: Type.Number() }));

export function histogramReads(pool: DatabasePool, scopes: ScopeResolver): Pick<EventReader, 'histogram'> {
  return {
    async histogram(viewer, filter, bins) {
      const scope = await scopes.scopeOf(viewer, filter);
      const bin = (t: Fragment) =>
        bins.kind === 'fixed'
          ? sqlText`date_bin(make_interval(secs => ${bins.sizeSeconds}), ${t}, to_timestamp(${bins.originSeconds}))`
          : sqlText`date_trunc(${bins.granularity}, ${t}, 'UTC')`;
      // Period counts can be binned only when every bin is made of whole periods.
      const grain = histogramGrain(bins);
      // The months a bin boundary falls inside (between the first and the last year with events),
      // for boxes: the other months can come from month counts.
      const cutMonths = sqlText`
        select m from generate_series(
          (select min(period) from event_counts where grain = 'y' and dataset_id = 0),
          (select max(period) from event_counts where grain = 'y' and dataset_id = 0) + interval '11 months',
          interval '1 month') m
        where ${bin(sqlText`m`)} <> ${bin(sqlText`m + interval '1 month' - interval '1 microsecond'`)}`;
      const parts = countParts(scope, filter, { histogram: grain, cutMonths });
      const rows = await pool.any(typed(BinRow)`
        select extract(epoch from ${bin(sqlText`t`)})::int8 as bin, sum(n)::int8 as count
        from (${unionParts(parts)}) p group by 1`);
      return new Map(rows.map((r) => [r.bin, r.count]));
    },
  };
}

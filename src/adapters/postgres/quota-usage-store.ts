import { Type } from 'typebox';
import type { QuotaUsageStore } from '../../ports/quota-usage.ts';
import { type DatabasePool, row, sql } from './database.ts';

const UsedRow = Type.Object({ used: Type.Number() });
const UsageRow = Type.Object({ quota: Type.String(), used: Type.Number() });

export function postgresQuotaUsageStore(pool: DatabasePool): QuotaUsageStore {
  return {
    async take(userId, quota, period, amount, limit) {
      if (limit !== null && amount > limit) return null;
      // One statement: the row lock taken by ON CONFLICT serialises concurrent takers, and the
      // WHERE re-checks the limit against the row as it is after any concurrent update.
      const taken = await pool.maybeOne(sql.type(row(UsedRow))`
        insert into quota_usage (user_id, quota, period_start, used)
        values (${userId}, ${quota}, ${period}::date, ${amount})
        on conflict (user_id, quota, period_start) do update
          set used = quota_usage.used + excluded.used
          where ${limit}::int is null or quota_usage.used + excluded.used <= ${limit}::int
        returning used`);
      return taken?.used ?? null;
    },
    async give(userId, quota, period, amount) {
      await pool.query(sql.unsafe`
        update quota_usage set used = greatest(0, used - ${amount})
        where user_id = ${userId} and quota = ${quota} and period_start = ${period}::date`);
    },
    async read(userId, periods) {
      if (periods.length === 0) return new Map();
      const rows = await pool.any(sql.type(row(UsageRow))`
        select u.quota, u.used from quota_usage u
        join unnest(${sql.array(
          periods.map((p) => p.quota),
          'text',
        )}, ${sql.array(
          periods.map((p) => p.period),
          'date',
        )}) as wanted(quota, period_start)
          on wanted.quota = u.quota and wanted.period_start = u.period_start
        where u.user_id = ${userId}`);
      return new Map(rows.map((r) => [r.quota, r.used]));
    },
  };
}

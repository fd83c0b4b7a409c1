import { Type } from 'typebox';
import type { FeatureFlagName } from '../../../domain/site/feature-flags.ts';
import type { FeatureFlagStore } from '../../../ports/site/feature-flag-store.ts';
import { type DatabasePool, row, sql } from '../database.ts';

const FlagRow = Type.Object({ name: Type.String(), enabled: Type.Boolean() });

export function postgresFeatureFlagStore(pool: DatabasePool): FeatureFlagStore {
  return {
    async read() {
      const rows = await pool.any(sql.type(row(FlagRow))`select name, enabled from feature_flags`);
      return Object.fromEntries(rows.map((r) => [r.name, r.enabled])) as Partial<
        Record<FeatureFlagName, boolean>
      >;
    },
    async write(values, by) {
      const entries = Object.entries(values);
      if (entries.length === 0) return;
      await pool.query(sql.unsafe`
        insert into feature_flags (name, enabled, updated_by)
        select name, enabled, ${by}
        from unnest(${sql.array(
          entries.map(([name]) => name),
          'text',
        )}, ${sql.array(
          entries.map(([, value]) => value),
          'bool',
        )}) as f(name, enabled)
        on conflict (name) do update
          set enabled = excluded.enabled, updated_by = excluded.updated_by, updated_at = now()`);
    },
  };
}

import { Type } from 'typebox';
import type { SiteSettings } from '../../../ports/site/site-settings.ts';
import { type DatabasePool, row, sql } from '../database.ts';

export function postgresSiteSettings(pool: DatabasePool): SiteSettings {
  return {
    async read(key) {
      return pool.maybeOneFirst(
        sql.type(row(Type.Object({ value: Type.Record(Type.String(), Type.Unknown()) })))`
          select value from site_settings where key = ${key}`,
      );
    },
    async write(key, value, by) {
      await pool.query(sql.unsafe`
        insert into site_settings (key, value, updated_by) values (${key}, ${sql.jsonb(value as never)}, ${by})
        on conflict (key) do update set value = excluded.value, updated_by = excluded.updated_by, updated_at = now()`);
    },
  };
}

import { Type } from 'typebox';
import { invalid } from '../../../domain/read/read-query.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { sqlText, typed } from '../sql-text.ts';
import type { Scope } from './scope.ts';

// The CSV export's data columns: the union of the top-level `data` keys of the exported datasets
// (docs/api-v1.md, "Exports"). Finding a dataset's keys reads every one of its events (1.5 s for
// 1M), so each API process remembers them per dataset together with the dataset's data version
// (migration 0240: raised by every write to its events, in the writing transaction). An export
// reads the versions (one small statement) and the keys only of datasets whose version moved.

/** CSV columns of the `data` keys at most (beyond: a 400 that says to narrow or use GeoJSON). */
export const MAX_CSV_DATA_COLUMNS = 1000;

/**
 * The budget of the pass that reads the keys of datasets not remembered yet: longer than the read
 * pool's per-statement budget, since it reads every event of those datasets once. The longest a
 * read-model statement may run: a read replica's client-side bound waits for it (read-replicas.ts).
 */
export const CSV_KEYS_STATEMENT_TIMEOUT_MS = 60_000;

/** Datasets whose keys an API process remembers (the least recently used are forgotten). */
const REMEMBERED_DATASET_KEYS = 1000;

const VersionRow = row(Type.Object({ id: Type.Number(), version: Type.String() }));
const KeysRow = row(
  Type.Object({ dataset_id: Type.Number(), keys: Type.Array(Type.String()), count: Type.Number() }),
);
const SettingRow = row(Type.Object({ setting: Type.String() }));

type Remembered = { version: string; keys: string[]; tooMany: boolean };

type DatasetKeys = {
  /** The sorted union of the data keys of the scope's datasets; a 400 beyond MAX_CSV_DATA_COLUMNS. */
  keysOf(scope: Scope): Promise<string[]>;
};

export function datasetKeys(pool: DatabasePool): DatasetKeys {
  const remembered = new Map<number, Remembered>();

  function remember(id: number, entry: Remembered): void {
    remembered.delete(id);
    remembered.set(id, entry);
    if (remembered.size > REMEMBERED_DATASET_KEYS) {
      const oldest = remembered.keys().next().value;
      if (oldest !== undefined) remembered.delete(oldest);
    }
  }

  /**
   * Reads the keys of some datasets: sorted, at most MAX_CSV_DATA_COLUMNS + 1 per dataset (one more
   * is enough to refuse), so that a dataset with a million different keys is still a small answer.
   */
  async function readKeys(ids: number[]): Promise<Map<number, { keys: string[]; count: number }>> {
    const rows = await pool.transaction(async (transaction) => {
      await transaction.query(
        typed(
          SettingRow,
        )`select set_config('statement_timeout', ${String(CSV_KEYS_STATEMENT_TIMEOUT_MS)}, true) as setting`,
      );
      return transaction.any(typed(KeysRow)`
        select dataset_id, (array_agg(k order by k))[1:${MAX_CSV_DATA_COLUMNS + 1}] as keys, count(*)::int4 as count
        from (select distinct e.dataset_id, k from events e cross join lateral jsonb_object_keys(e.data) k
              where e.dataset_id = any(${sql.array(ids, 'int8')}) and jsonb_typeof(e.data) = 'object') s
        group by dataset_id`);
    });
    return new Map(rows.map((found) => [found.dataset_id, { keys: found.keys, count: found.count }]));
  }

  return {
    async keysOf(scope) {
      const datasets = await pool.any(typed(VersionRow)`
        select d.id, coalesce(v.version, 0)::text as version
        from datasets d left join dataset_data_versions v on v.dataset_id = d.id
        where ${scope.datasetIds === null ? sqlText`true` : sqlText`d.id = any(${scope.datasetIds})`}`);
      const entries = new Map<number, Remembered | undefined>(
        datasets.map((dataset) => [dataset.id, remembered.get(dataset.id)]),
      );
      const stale = datasets.filter((dataset) => entries.get(dataset.id)?.version !== dataset.version);
      if (stale.length > 0) {
        const found = await readKeys(stale.map((dataset) => dataset.id));
        // Stored with the version read before the keys: a write in between raised the version, so
        // the next export reads this dataset again.
        for (const dataset of stale) {
          const keys = found.get(dataset.id) ?? { keys: [], count: 0 };
          const entry = {
            version: dataset.version,
            keys: keys.keys,
            tooMany: keys.count > MAX_CSV_DATA_COLUMNS,
          };
          entries.set(dataset.id, entry);
          remember(dataset.id, entry);
        }
      }
      const union = new Set<string>();
      for (const entry of entries.values()) {
        if (entry?.tooMany) throw tooManyColumns();
        for (const key of entry?.keys ?? []) union.add(key);
        if (union.size > MAX_CSV_DATA_COLUMNS) throw tooManyColumns();
      }
      // By UTF-16 code unit (JavaScript's sort): the same order whatever the database's collation.
      return [...union].sort();
    },
  };
}

function tooManyColumns(): Error {
  return invalid(
    'datasets',
    `the datasets' events have more different data keys than the ${MAX_CSV_DATA_COLUMNS} columns a CSV export holds; narrow the datasets or export GeoJSON`,
  );
}

import { Type } from 'typebox';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { typed } from '../sql-text.ts';
import { countParts } from './parts.ts';
import { unionParts } from './rows.ts';
import type { ScopeResolver } from './scope.ts';

// Event counts, in total and per dataset: the union of the parts of parts.ts.

export const CountRow = row(Type.Object({ count: Type.Number() }));
const DatasetCountRow = row(
  Type.Object({
    dataset_id: Type.Number(),
    dataset_title: Type.String(),
    catalog_id: Type.Number(),
    catalog_title: Type.String(),
    count: Type.Number(),
  }),
);

export function countReads(
  pool: DatabasePool,
  scopes: ScopeResolver,
): Pick<EventReader, 'countEvents' | 'countByDataset'> {
  return {
    async countEvents(viewer, filter) {
      const scope = await scopes.scopeOf(viewer, filter);
      return pool.oneFirst(typed(CountRow)`
        select coalesce(sum(n), 0)::int8 as count from (${unionParts(countParts(scope, filter))}) p`);
    },

    async countByDataset(viewer, filter) {
      const scope = await scopes.scopeOf(viewer, filter);
      const rows = await pool.any(typed(DatasetCountRow)`
        select p.dataset_id, d.title as dataset_title, d.catalog_id, c.title as catalog_title, p.count
        from (select dataset_id, sum(n)::int8 as count
              from (${unionParts(countParts(scope, filter, { perDataset: true }))}) u
              group by dataset_id) p
        join datasets d on d.id = p.dataset_id join catalogs c on c.id = d.catalog_id
        where p.count > 0
        order by p.count desc, p.dataset_id`);
      return rows.map((r) => ({
        datasetId: r.dataset_id,
        datasetTitle: r.dataset_title,
        catalogId: r.catalog_id,
        catalogTitle: r.catalog_title,
        count: r.count,
      }));
    },
  };
}

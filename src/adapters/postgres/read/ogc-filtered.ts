import { Type } from 'typebox';
import { parseEventSort } from '../../../domain/read/sort.ts';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { sqlText, typed } from '../sql-text.ts';
import { eventsFrom, generalisedAmong } from './private-locations.ts';
import { filterCondition } from './cql-sql.ts';
import { pageJson } from './page.ts';
import { visibility } from './scope.ts';

// OGC API – Features reads beyond the /api/v1 read model: a collection's typed fields (its dataset's
// latest schema version) and a page of items under a CQL2 filter (Part 3). A filtered page reads the
// dataset's rows (no precomputed count answers a filter on `data`), within the statement budget of
// every read; its ids are in id order, as every /ogc items page.

const FieldsRow = row(Type.Object({ fields: Type.Unknown() }));
const PageRow = row(Type.Object({ events: Type.String(), total: Type.Number() }));

export function ogcFilteredReads(
  pool: DatabasePool,
): Pick<EventReader, 'collectionFields' | 'filteredItemsPage'> {
  return {
    async collectionFields(viewer, slug) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const found = await pool.maybeOne(typed(FieldsRow)`
        select coalesce((select v.fields from dataset_schema_versions v where v.dataset_id = d.id
                         order by v.version desc limit 1), '[]'::jsonb) as fields
        from datasets d join catalogs c on c.id = d.catalog_id
        where d.slug = ${slug} and ${visible}`);
      if (!found) return null;
      const fields = Array.isArray(found.fields) ? (found.fields as unknown[]) : [];
      return fields.flatMap((field) =>
        typeof field === 'object' && field !== null && typeof (field as { name?: unknown }).name === 'string'
          ? [
              {
                name: (field as { name: string }).name,
                type: String((field as { type?: unknown }).type ?? 'string'),
              },
            ]
          : [],
      );
    },

    async filteredItemsPage(viewer, slug, filter, page) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const condition = filterCondition(filter);
      const scope = { generalised: generalisedAmong(viewer, sqlText`d.slug = ${slug} and ${visible}`) };
      const dataset = sqlText`(select d.id from datasets d join catalogs c on c.id = d.catalog_id
                               where d.slug = ${slug} and ${visible})`;
      const after = page.after ? sqlText`and e.id > ${page.after.id}` : sqlText``;
      const window = page.after
        ? sqlText`limit ${page.limit}`
        : sqlText`limit ${page.limit} offset ${(page.page - 1) * page.limit}`;
      const result = await pool.one(typed(PageRow)`
        with page as materialized (
          select e.id from ${eventsFrom(scope)} e where e.dataset_id = ${dataset} and ${condition} ${after}
          order by e.id asc ${window}
        )
        select (${pageJson(parseEventSort('id'), scope)}) as events,
               (select count(*) from ${eventsFrom(scope)} e where e.dataset_id = ${dataset} and ${condition})::int8 as total`);
      return { eventsJson: Buffer.from(result.events), totalDocs: result.total };
    },
  };
}

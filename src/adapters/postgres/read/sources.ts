import { Type } from 'typebox';
import type { EventReader } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { sqlText, typed } from '../sql-text.ts';
import { visibility } from './scope.ts';

// The catalogs and datasets a viewer may see, with their event counts, and a dataset's sample rows.

const SourceRow = row(
  Type.Object({
    catalog_id: Type.Number(),
    catalog_slug: Type.String(),
    catalog_title: Type.String(),
    catalog_description: Type.Union([Type.String(), Type.Null()]),
    dataset_id: Type.Union([Type.Number(), Type.Null()]),
    dataset_slug: Type.Union([Type.String(), Type.Null()]),
    dataset_title: Type.Union([Type.String(), Type.Null()]),
    dataset_description: Type.Union([Type.String(), Type.Null()]),
    date_fields: Type.Union([Type.Array(Type.String()), Type.Null()]),
    count: Type.Number(),
  }),
);
const DatasetRow = row(
  Type.Object({
    id: Type.Number(),
    slug: Type.String(),
    title: Type.String(),
    date_fields: Type.Array(Type.String()),
    total: Type.Number(),
  }),
);
const DataRow = row(Type.Object({ data: Type.Record(Type.String(), Type.Unknown()) }));

/**
 * The event count of `datasets d`: the sum of its year counts, or its rows while its counts are
 * pending (a bulk import's, migration 0330: the counts hold none of its events then).
 */
const DATASET_TOTAL = sqlText`(case when d.counts_pending
  then (select count(*) from events e where e.dataset_id = d.id)
  else coalesce((select sum(event_count) from event_counts k where k.grain = 'y' and k.dataset_id = d.id), 0)
  end)::int8`;

/**
 * Whether `datasets d` is listed (issue 28 §7, "nothing left behind"; docs/decisions.md): not while
 * imports into it exist, none of them completed, and it holds no event. That is a new dataset whose
 * first import failed (at parsing, at a quota) or is still running: it stays in the database, so a
 * retry continues the same job into it, but Explore's filters and the API's listings show no empty
 * name. A dataset created empty on purpose (no import yet) and one an import ever filled are listed.
 */
const LISTED_DATASET = sqlText`(
  exists (select 1 from events e where e.dataset_id = d.id)
  or not exists (select 1 from ingest_jobs j where j.dataset_id = d.id)
  or exists (select 1 from ingest_jobs j where j.dataset_id = d.id and j.stage = 'completed'))`;

export function sourceReads(pool: DatabasePool): Pick<EventReader, 'dataSources' | 'sampleData'> {
  return {
    async dataSources(viewer) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const rows = await pool.any(typed(SourceRow)`
        select c.id as catalog_id, c.slug as catalog_slug, c.title as catalog_title,
               c.description as catalog_description,
               d.id as dataset_id, d.slug as dataset_slug, d.title as dataset_title,
               d.description as dataset_description,
               case when jsonb_typeof(d.schema_settings->'dateFields') = 'array'
                    then array(select jsonb_array_elements_text(d.schema_settings->'dateFields')) end as date_fields,
               ${DATASET_TOTAL} as count
        from catalogs c join datasets d on d.catalog_id = c.id
        where ${visible} and ${LISTED_DATASET}
        order by c.title, c.id, d.title, d.id`);
      const catalogs = new Map<number, Awaited<ReturnType<EventReader['dataSources']>>[number]>();
      for (const r of rows) {
        let catalog = catalogs.get(r.catalog_id);
        if (!catalog) {
          catalog = {
            id: r.catalog_id,
            slug: r.catalog_slug,
            title: r.catalog_title,
            description: r.catalog_description,
            eventCount: 0,
            datasets: [],
          };
          catalogs.set(r.catalog_id, catalog);
        }
        if (r.dataset_id === null || r.dataset_slug === null || r.dataset_title === null) continue;
        catalog.eventCount += r.count;
        catalog.datasets.push({
          id: r.dataset_id,
          slug: r.dataset_slug,
          title: r.dataset_title,
          description: r.dataset_description,
          eventCount: r.count,
          dateFields: r.date_fields ?? [],
        });
      }
      return [...catalogs.values()];
    },

    async sampleData(viewer, datasetId, sampleSize) {
      const visible = visibility(viewer) ?? sqlText`true`;
      const dataset = await pool.maybeOne(typed(DatasetRow)`
        select d.id, d.slug, d.title,
               case when jsonb_typeof(d.schema_settings->'dateFields') = 'array'
                    then array(select jsonb_array_elements_text(d.schema_settings->'dateFields'))
                    else '{}'::text[] end as date_fields,
               ${DATASET_TOTAL} as total
        from datasets d join catalogs c on c.id = d.catalog_id
        where d.id = ${datasetId} and ${visible}`);
      if (!dataset) return null;
      const rows = await pool.any(typed(DataRow)`
        select data from events where dataset_id = ${datasetId}
        order by event_timestamp desc limit ${sampleSize}`);
      return {
        dataset: {
          id: dataset.id,
          slug: dataset.slug,
          title: dataset.title,
          dateFields: dataset.date_fields,
        },
        total: dataset.total,
        samples: rows.map((r) => r.data),
      };
    },
  };
}

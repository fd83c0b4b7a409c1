import type { FragmentSqlToken } from 'slonik';
import { sql } from './database.ts';

// Shared by the ingest, scraper and collection stores: the outcome of the import a run (of a schedule
// or a scraper) created, as one JSON value for the
// run lists: the file's status, and from its jobs' stored stage outputs the rows created-events
// stored new, updated and left as they were, and the reasons it waits for. So "imported" on a run
// is never mistaken for "the rows are in": a run whose import waits for review says so.

/**
 * `{ingestFile, status, rowsNew, rowsUpdated, rowsUnchanged, reviewReasons}` of the ingest file whose
 * id `fileId` gives, or null without one. The row counts are null until create-events completed
 * for every job; rowsUnchanged are the rows found stored already (create-events' skipped
 * duplicates less the rows repeated inside the file, which analyze-duplicates counted).
 */
export function importOutcomeJson(fileId: FragmentSqlToken): FragmentSqlToken {
  return sql.fragment`(
    select json_build_object(
      'ingestFile', f.id,
      'status', f.status,
      'rowsNew', case when c.pending = 0 then c.created end,
      'rowsUpdated', case when c.pending = 0 then c.updated end,
      'rowsUnchanged', case when c.pending = 0 then c.unchanged end,
      'reviewReasons', case when f.status = 'needs-review' then c.reasons else '[]'::jsonb end)
    from ingest_files f
    cross join lateral (
      select count(*) filter (where ce.output is null)::int as pending,
             coalesce(sum((ce.output->>'created')::int), 0)::int as created,
             coalesce(sum((ce.output->>'updated')::int), 0)::int as updated,
             coalesce(sum(greatest((ce.output->>'duplicates')::int
               - coalesce((ad.output->>'internal')::int, 0), 0)), 0)::int as unchanged,
             coalesce((select jsonb_agg(reason) from ingest_jobs rj,
                         jsonb_array_elements_text(coalesce(rj.review_reasons, '[]'::jsonb)) reason
                       where rj.ingest_file_id = f.id), '[]'::jsonb) as reasons
      from ingest_jobs j
      left join ingest_job_stages ce on ce.ingest_job_id = j.id and ce.stage = 'create-events'
      left join ingest_job_stages ad on ad.ingest_job_id = j.id and ad.stage = 'analyze-duplicates'
      where j.ingest_file_id = f.id
    ) c
    where f.id = ${fileId})`;
}

import { Type } from 'typebox';
import { type DatabasePool, row, sql } from './database.ts';

// Shared by the schedule and scraper stores: whether a recurring source (a schedule or a scraper) has an import into a dataset that
// completed: both keep the ingest file of each run on their run rows. The duplicate review asks it
// (domain/ingest/review.ts, duplicateReviewFor).

const RUNS = {
  schedule: sql.fragment`scheduled_ingest_runs r join ingest_jobs j on j.ingest_file_id = r.ingest_file_id
    where r.scheduled_ingest_id`,
  scraper: sql.fragment`scraper_runs r join ingest_jobs j on j.ingest_file_id = r.ingest_file_id
    where r.scraper_id`,
};

export function hasCompletedImport(
  pool: DatabasePool,
  source: keyof typeof RUNS,
  sourceId: number,
  datasetId: number,
): Promise<boolean> {
  return pool.oneFirst(sql.type(row(Type.Object({ done: Type.Boolean() })))`
    select exists (
      select 1 from ${RUNS[source]} = ${sourceId} and j.dataset_id = ${datasetId} and j.stage = 'completed'
    ) as done`);
}

import { Type } from 'typebox';
import type { GeocodeOutcome } from '../../../ports/ingest/geocoder.ts';
import type { JobGeocodes } from '../../../ports/ingest/job-geocodes.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { outcomeFromRow, outcomeRows } from './geocode-cache.ts';
import { progressSet } from './ingest-rows.ts';

// The geocoder's answers for one job, stored with geocode-batch's progress.

export function postgresJobGeocodes(pool: DatabasePool): JobGeocodes {
  return {
    async jobGeocodes(jobId) {
      const rows = await pool.any(
        sql.type(
          row(
            Type.Object({
              address: Type.String(),
              longitude: Nullable(Type.Number()),
              latitude: Nullable(Type.Number()),
              confidence: Nullable(Type.Number()),
              failure: Nullable(Type.String()),
              detail: Nullable(Type.Unknown()),
            }),
          ),
        )`select address, longitude, latitude, confidence, failure, detail from ingest_job_geocodes where ingest_job_id = ${jobId}`,
      );
      const map = new Map<string, GeocodeOutcome>();
      for (const r of rows) map.set(r.address, outcomeFromRow(r));
      return map;
    },

    async saveJobGeocodes(jobId, results, progress) {
      await pool.transaction(async (tx) => {
        if (results.size) {
          await tx.query(sql.unsafe`
            insert into ingest_job_geocodes (ingest_job_id, address, longitude, latitude, confidence, failure, detail)
            select ${jobId}, * from ${outcomeRows(results)}
            on conflict (ingest_job_id, address) do nothing`);
        }
        await tx.query(sql.unsafe`
          update ingest_job_stages set ${progressSet(progress)}
          where ingest_job_id = ${jobId} and stage = 'geocode-batch'`);
      });
    },
  };
}

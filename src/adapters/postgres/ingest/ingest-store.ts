import type { IngestStore } from '../../../ports/ingest/ingest-store.ts';
import type { DatabasePool } from '../database.ts';
import { postgresEventBatchWriter } from './event-batch-writer.ts';
import { postgresEventLocations } from './event-locations.ts';
import { postgresDeferredCounts, postgresIngestDatasets, postgresSchemaVersions } from './ingest-datasets.ts';
import { postgresIngestJobStore } from './ingest-job-store.ts';
import { postgresJobGeocodes } from './job-geocodes.ts';

// Ingestion's tables in PostgreSQL as the one IngestStore the composition root hands out: each part
// (files and jobs, datasets, schema versions, deferred counts, event batches, job geocodes, events' later locations) is built
// in its own file. A stage's progress and counters are written in the same transaction as the
// events or geocodes they count.

export function postgresIngestStore(pool: DatabasePool): IngestStore {
  return {
    ...postgresIngestJobStore(pool),
    ...postgresIngestDatasets(pool),
    ...postgresSchemaVersions(pool),
    ...postgresDeferredCounts(pool),
    ...postgresEventBatchWriter(pool),
    ...postgresJobGeocodes(pool),
    ...postgresEventLocations(pool),
  };
}

import type { DeferredCounts } from './deferred-counts.ts';
import type { EventBatchWriter } from './event-batch-writer.ts';
import type { EventLocations } from './event-locations.ts';
import type { IngestDatasets } from './ingest-datasets.ts';
import type { IngestJobStore } from './ingest-job-store.ts';
import type { JobGeocodes } from './job-geocodes.ts';
import type { SchemaVersions } from './schema-versions.ts';

/**
 * Everything ingestion keeps in the database, as the one object the composition root builds
 * (adapters/postgres/ingest/ingest-store.ts): each part is a port of its own, and a use case or stage names
 * the parts it needs.
 */
export type IngestStore = IngestJobStore &
  IngestDatasets &
  SchemaVersions &
  DeferredCounts &
  EventBatchWriter &
  JobGeocodes &
  EventLocations;

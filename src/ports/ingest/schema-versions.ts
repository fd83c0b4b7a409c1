import type { FieldMapping, FieldSchema } from '../../domain/ingest/schema.ts';

type SchemaVersion = { version: number; fields: FieldSchema[]; mapping: FieldMapping };

/** A dataset's schema history: each import whose schema differs adds a version. */
export interface SchemaVersions {
  latestSchema(datasetId: number): Promise<SchemaVersion | null>;
  createSchemaVersion(
    datasetId: number,
    jobId: number,
    fields: FieldSchema[],
    mapping: FieldMapping,
  ): Promise<number>;
}

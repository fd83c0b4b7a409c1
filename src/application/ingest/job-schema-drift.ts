import type { Viewer } from '../../domain/access.ts';
import {
  compareSchemas,
  driftHasChanges,
  type FieldSchema,
  type SchemaDrift,
  type SchemaMode,
} from '../../domain/ingest/schema.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { SchemaVersions } from '../../ports/ingest/schema-versions.ts';
import type { DetectOutput } from './stages/outputs.ts';
import { accessibleJob, type ImportAccessDeps } from './import-access.ts';

/**
 * A file's fields against the dataset's current schema version under a schema mode: the one drift
 * rule, asked by the pipeline's validate-schema, by My imports before an approval and by the import
 * wizard before the start, so that what the wizard shows is what the pipeline will find. Null for a
 * dataset with no schema yet (its first import defines it).
 */
export async function driftAgainstDataset(
  store: SchemaVersions,
  datasetId: number,
  fields: FieldSchema[],
  mode: SchemaMode,
): Promise<{ version: number; drift: SchemaDrift } | null> {
  const current = await store.latestSchema(datasetId);
  if (!current) return null;
  return { version: current.version, drift: compareSchemas(current.fields, fields, mode) };
}

// What an approval would accept: the schema a job detected against its dataset's current schema
// version, under the job's schema mode. My imports shows it next to "Approve" for a job stopped by
// a breaking change (SCHEMA_DRIFT) or waiting in needs-review, so nobody approves blind. Null when
// nothing differs: a job waiting for another reason (duplicates, invalid rows) has no schema change
// to approve, and the page must not offer one.

export async function jobSchemaDrift(
  deps: { store: IngestStore; hierarchy: ImportAccessDeps['hierarchy'] },
  viewer: Viewer,
  jobId: number,
): Promise<SchemaDrift | null> {
  const job = await accessibleJob(deps, viewer, jobId);
  if (job.datasetId === null) return null;
  const detected = (await deps.store.stages(jobId)).find((stage) => stage.stage === 'detect-schema');
  const fields = (detected?.output as DetectOutput | null | undefined)?.fields;
  if (!fields) return null;
  const found = await driftAgainstDataset(deps.store, job.datasetId, fields, job.config.schemaMode);
  return found && driftHasChanges(found.drift) ? found.drift : null;
}

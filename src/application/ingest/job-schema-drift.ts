import type { Viewer } from '../../domain/access.ts';
import { compareSchemas, driftHasChanges, type SchemaDrift } from '../../domain/ingest/schema.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { DetectOutput } from './stages/outputs.ts';
import { accessibleJob, type ImportAccessDeps } from './import-access.ts';

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
  const current = await deps.store.latestSchema(job.datasetId);
  if (!current) return null;
  const drift = compareSchemas(current.fields, fields, job.config.schemaMode);
  return driftHasChanges(drift) ? drift : null;
}

import type { SchemaVersions } from '../../../ports/ingest/schema-versions.ts';
import type { SchemaVersionOutput } from './outputs.ts';
import { outputOf, requireDataset, type StageContext, type TaskResult } from './stage-context.ts';

// create-schema-version: the dataset's schema history gains the file's schema, unless it is the
// current one unchanged.

export async function createSchemaVersion(
  deps: { store: SchemaVersions },
  context: StageContext,
): Promise<TaskResult<SchemaVersionOutput>> {
  const schema = outputOf(context, 'detect-schema');
  const validated = outputOf(context, 'validate-schema');
  const datasetId = requireDataset(context.job);
  const current = await deps.store.latestSchema(datasetId);
  const unchanged =
    current &&
    validated.drift &&
    !validated.drift.added.length &&
    !validated.drift.removed.length &&
    !validated.drift.changed.length;
  if (unchanged) return { output: { version: current.version, created: false } };
  const version = await deps.store.createSchemaVersion(
    datasetId,
    context.job.id,
    schema.fields,
    schema.mapping,
  );
  return { output: { version, created: true } };
}

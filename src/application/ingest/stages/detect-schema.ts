import { addressColumns } from '../../../domain/ingest/geocoding/address-template.ts';
import { needsUser } from '../../../domain/ingest/failures.ts';
import { detectSchema } from '../../../domain/ingest/schema.ts';
import { readHeaderAndSample } from '../job-rows.ts';
import type { SourceFiles } from '../../../ports/ingest/source-files.ts';
import type { DetectOutput } from './outputs.ts';
import { outputOf, type StageContext, type StageProgress, type TaskResult } from './stage-context.ts';

type DetectDeps = { files: SourceFiles; store: StageProgress };

// detect-schema: the schema analyze-duplicates detected from the file's first rows, checked against
// the job's settings (a named column must exist, a timestamp column must be found) and passed on as
// this stage's output: the schema that validate-schema, create-schema-version and create-events use.

export async function detectSchemaStage(
  deps: DetectDeps,
  context: StageContext,
): Promise<TaskResult<DetectOutput>> {
  const { job } = context;
  const { schema, header, sampleRows } = await detectedSchema(deps, context);
  await deps.store.reportProgress(job.id, 'detect-schema', {
    rowsTotal: sampleRows,
    rowsProcessed: sampleRows,
  });
  for (const [key, spec] of Object.entries(job.config.fieldMapping)) {
    if (!spec) continue;
    for (const column of key === 'address' ? addressColumns(spec) : [spec as string]) {
      if (!header.includes(column)) {
        throw needsUser(
          'MAPPING_INVALID',
          `settings.fieldMapping.${key} names column "${column}", which the file does not have`,
        );
      }
    }
  }
  if (!schema.mapping.timestamp) {
    throw needsUser(
      'NO_TIMESTAMP',
      `no timestamp column found among ${header.length} column(s) (${header.slice(0, 10).join(', ')}${header.length > 10 ? ', ...' : ''}); ` +
        'name one in settings.fieldMapping.timestamp',
    );
  }
  return { output: schema };
}

/**
 * The schema analyze-duplicates detected. When its output does not hold one (stored before it was
 * kept), or no row of the sample was readable, the sample is read again: the same rows give the
 * same schema, and a sample without a readable row fails with its precise error.
 */
async function detectedSchema(deps: DetectDeps, context: StageContext) {
  const analyzed = outputOf(context, 'analyze-duplicates');
  if (analyzed.detected && analyzed.detected.sampleRows > 0) return analyzed.detected;
  const { header, sample } = await readHeaderAndSample(deps, context);
  const schema = detectSchema(header, sample, context.job.config.fieldMapping);
  return { schema, header, sampleRows: sample.length };
}

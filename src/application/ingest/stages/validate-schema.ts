import { needsUser } from '../../../domain/ingest/failures.ts';
import { describeDrift } from '../../../domain/ingest/schema.ts';
import { driftAgainstDataset } from '../job-schema-drift.ts';
import { dataRows, type RowScan, rowScan, type RowTally } from '../job-rows.ts';
import type { SchemaVersions } from '../../../ports/ingest/schema-versions.ts';
import type { SourceFiles } from '../../../ports/ingest/source-files.ts';
import type { ValidateOutput } from './outputs.ts';
import {
  outputOf,
  PROGRESS_EVERY,
  requireDataset,
  type StageContext,
  type StageProgress,
  type TaskResult,
} from './stage-context.ts';

// validate-schema: the file's schema against the dataset's current one (a breaking drift stops an
// upload until approved), and the row checks analyze-duplicates made with that same schema: a file
// without a valid row stops here.

type ValidateDeps = { files: SourceFiles; store: SchemaVersions & StageProgress };

export async function validateSchema(
  deps: ValidateDeps,
  context: StageContext,
): Promise<TaskResult<ValidateOutput>> {
  const { job } = context;
  const schema = outputOf(context, 'detect-schema');
  const analyzed = outputOf(context, 'analyze-duplicates');
  const current = await driftAgainstDataset(
    deps.store,
    requireDataset(job),
    schema.fields,
    job.config.schemaMode,
  );
  const drift = current?.drift ?? null;
  if (drift?.breaking && !job.approvedAt && context.file.source === 'upload') {
    throw needsUser(
      'SCHEMA_DRIFT',
      `the file's schema breaks the dataset's current schema (version ${current?.version}, mode ${job.config.schemaMode}): ${describeDrift(drift)}; approve the change to continue`,
    );
  }
  // detect-schema passed on the schema analyze-duplicates checked every row with, so its tally
  // stands; only an output stored without one (before the pass kept it) needs a pass of its own.
  const tally = analyzed.validation ?? (await checkEveryRow(deps, context, analyzed.rowsTotal));
  const { validRows, addressRows, invalidRows, rowErrors } = tally ?? {
    validRows: 0,
    addressRows: 0,
    invalidRows: 0,
    rowErrors: [],
  };
  await deps.store.reportProgress(job.id, 'validate-schema', {
    rowsTotal: analyzed.rowsTotal,
    rowsProcessed: analyzed.rowsTotal,
  });
  if (validRows === 0) {
    const first = rowErrors[0];
    throw needsUser(
      'NO_VALID_ROWS',
      `none of the ${invalidRows} row(s) is valid${first ? `; row ${first.row}: ${first.field} ${first.message}` : ''}`,
    );
  }
  return { output: { validRows, addressRows, invalidRows, rowErrors, drift } };
}

async function checkEveryRow(
  deps: ValidateDeps,
  context: StageContext,
  rowsTotal: number,
): Promise<RowTally | null> {
  const schema = outputOf(context, 'detect-schema');
  let scan: RowScan | null = null;
  for await (const { header, values, row, problem } of dataRows(deps, context)) {
    scan ??= rowScan(header, schema, context);
    scan.check(values, row, problem);
    if (row % PROGRESS_EVERY === 0) {
      await deps.store.reportProgress(context.job.id, 'validate-schema', { rowsTotal, rowsProcessed: row });
    }
  }
  if (scan?.addresses) context.addresses = scan.addresses;
  return scan?.tally ?? null;
}

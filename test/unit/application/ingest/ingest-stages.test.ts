import t from 'tap';
import { analyzeDuplicates } from '../../../../src/application/ingest/stages/analyze-duplicates.ts';
import { detectSchemaStage } from '../../../../src/application/ingest/stages/detect-schema.ts';
import type { StageContext } from '../../../../src/application/ingest/stages/stage-context.ts';
import { validateSchema } from '../../../../src/application/ingest/stages/validate-schema.ts';
import type { SourceRow } from '../../../../src/domain/ingest/rows.ts';
import { DEFAULT_JOB_CONFIG } from '../../../../src/domain/ingest/settings.ts';
import type { TaskStage } from '../../../../src/domain/ingest/stages.ts';
import type { StoredStage } from '../../../../src/ports/ingest/ingest-job-store.ts';
import type { IngestFile, IngestJob } from '../../../../src/domain/ingest/imports.ts';
import { memorySourceFiles } from '../../../fakes/ingest/source-files.ts';

// The forward data flow of the ingestion stages: what the analyze-duplicates pass learns (the
// schema of the first rows, every row's check) is its stored output, and detect-schema and
// validate-schema use it instead of reading the file again.

const ROWS: SourceRow[] = [
  ['id', 'time', 'latitude', 'longitude', 'title'],
  ['1', '2026-01-01T00:00:00Z', '52.5', '13.4', 'a'],
  ['2', '2026-01-02T00:00:00Z', '95', '2.3', 'b'],
  ['3', '2026-01-03T00:00:00Z', '40.4', '-3.7', 'c'],
  ['4', '2026-01-04T00:00:00Z', '41.9', '12.5', 'd'],
  ['5', '2026-01-05T00:00:00Z', '59.3', '18.1', 'e'],
  ['6', '2026-01-06T00:00:00Z', '60.2', '24.9', 'f'],
];

/** The file as the shared fake holds it; `passes()` counts the reads of its rows. */
function files() {
  const source = memorySourceFiles({ 'a.csv': [{ name: null, rows: ROWS }] });
  return { source, passes: () => source.reads('a.csv') };
}

const store = {
  datasetHasEvents: async () => false,
  countExisting: async () => 0,
  reportProgress: async () => {},
  latestSchema: async () => null,
  createDataset: async () => ({ id: 1, title: '' }),
  datasetInCatalog: async () => true,
  catalogOfDataset: async () => 1,
  removeEmptyDataset: async () => false,
  catalogExists: async () => true,
  createSchemaVersion: async () => 1,
};

function context(): StageContext {
  const job = {
    id: 5,
    sheetIndex: 0,
    datasetId: 3,
    config: DEFAULT_JOB_CONFIG,
    approvedAt: null,
  } as IngestJob;
  const file = { id: 4, storedPath: 'a.csv', format: 'csv', source: 'upload' } as IngestFile;
  return { job, file, records: new Map() };
}

function completed(ctx: StageContext, stage: TaskStage, output: unknown) {
  ctx.records.set(stage, { stage, status: 'completed', counters: {}, output } as unknown as StoredStage);
}

t.test(
  'analyze-duplicates passes on the schema and the row checks; the next stages read no file',
  async (t) => {
    const { source, passes } = files();
    const deps = { files: source, store };
    const ctx = context();
    const analyzed = await analyzeDuplicates(deps, ctx);
    t.equal(passes(), 1, 'one pass over the file');
    t.match(analyzed.output, {
      rowsTotal: 6,
      detected: { header: ROWS[0], sampleRows: 6, schema: { mapping: { timestamp: 'time', id: 'id' } } },
      validation: { validRows: 5, invalidRows: 1, rowErrors: [{ row: 2 }] },
    });
    completed(ctx, 'analyze-duplicates', analyzed.output);

    const detected = await detectSchemaStage(deps, ctx);
    t.same(detected.output, analyzed.output.detected?.schema, "detect-schema hands on the pass's schema");
    completed(ctx, 'detect-schema', detected.output);

    const validated = await validateSchema(deps, ctx);
    t.match(validated.output, { validRows: 5, invalidRows: 1, rowErrors: [{ row: 2 }] });
    t.equal(passes(), 1, 'neither detect-schema nor validate-schema read the file again');
  },
);

t.test('an analyze output stored without them: the stages read the file and find the same', async (t) => {
  const first = files();
  const analyzed = await analyzeDuplicates({ files: first.source, store }, context());
  const { detected: _detected, validation: _validation, ...stored } = analyzed.output;

  const { source, passes } = files();
  const deps = { files: source, store };
  const ctx = context();
  completed(ctx, 'analyze-duplicates', stored);
  const detected = await detectSchemaStage(deps, ctx);
  t.same(detected.output, analyzed.output.detected?.schema);
  completed(ctx, 'detect-schema', detected.output);
  const validated = await validateSchema(deps, ctx);
  t.match(validated.output, {
    validRows: analyzed.output.validation?.validRows,
    invalidRows: analyzed.output.validation?.invalidRows,
    rowErrors: analyzed.output.validation?.rowErrors,
  });
  t.equal(passes(), 2, 'the sample once, every row once');
});

import { permanent } from '../../../domain/ingest/failures.ts';
import { type RowProblem, uniqueIdFor } from '../../../domain/ingest/rows.ts';
import { type DetectedSchema, detectSchema } from '../../../domain/ingest/schema.ts';
import { dataRows, readHeaderAndSample, type RowScan, rowScan, SAMPLE_ROWS } from '../job-rows.ts';
import type { IngestDatasets } from '../../../ports/ingest/ingest-datasets.ts';
import type { SourceFiles } from '../../../ports/ingest/source-files.ts';
import type { AnalyzeOutput } from './outputs.ts';
import {
  PROGRESS_EVERY,
  requireDataset,
  type StageContext,
  type StageProgress,
  type TaskResult,
} from './stage-context.ts';

// analyze-duplicates: the one pass over the whole file before anything is stored. It counts the
// rows and their duplicates (within the file and against the dataset), and, since it reads every
// row anyway, detects the schema from the first rows and checks every row with it (validate-schema's
// work) and collects the addresses to geocode (geocode-batch's work). What it learns is its output.

/** What the pass needs: the file, the dataset (for duplicates of its events), the job's progress. */
type AnalyzeDeps = { files: SourceFiles; store: IngestDatasets & StageProgress };

type HeldRow = { values: string[]; row: number; problem: RowProblem | null };

export async function analyzeDuplicates(
  deps: AnalyzeDeps,
  context: StageContext,
): Promise<TaskResult<AnalyzeOutput>> {
  const { job } = context;
  const datasetId = requireDataset(job);
  const checkExternal = await deps.store.datasetHasEvents(datasetId);
  const seen = new Set<string>();
  let internal = 0;
  let external = 0;
  let rowsTotal = 0;
  let header: string[] = [];
  let pending: string[] = [];
  // The first SAMPLE_ROWS rows are held back until the schema is detected from them (the same rows
  // detect-schema would read), so that this one pass also checks every row for validate-schema and
  // collects the addresses for geocode-batch.
  let sample: HeldRow[] | null = [];
  let sampled = 0;
  let scan: RowScan | null = null;
  let detected: { schema: DetectedSchema; header: string[]; sampleRows: number } | null = null;
  const flushExternal = async () => {
    if (checkExternal && pending.length) external += await deps.store.countExisting(datasetId, pending);
    pending = [];
  };
  const visit = async (values: string[], row: number, problem: RowProblem | null) => {
    const key = problem ? null : uniqueIdFor(values, (scan as RowScan).idIndex, job.config.idStrategy);
    if (key?.ok) {
      if (seen.has(key.id)) internal += 1;
      else {
        seen.add(key.id);
        pending.push(key.id);
        if (pending.length >= 5000) await flushExternal();
      }
    }
    (scan as RowScan).check(values, row, problem);
    if (row % PROGRESS_EVERY === 0) {
      await deps.store.reportProgress(job.id, 'analyze-duplicates', { rowsTotal: row, rowsProcessed: row });
    }
  };
  const startScan = async () => {
    const held = sample ?? [];
    sample = null;
    const readable = held.filter((r) => !r.problem).map((r) => r.values);
    const schema = detectSchema(header, readable, job.config.fieldMapping);
    detected = { schema, header, sampleRows: readable.length };
    scan = rowScan(header, schema, context);
    for (const r of held) await visit(r.values, r.row, r.problem);
  };
  for await (const { header: h, values, row, problem } of dataRows(deps, context)) {
    context.signal?.throwIfAborted();
    header = h;
    rowsTotal = row;
    if (sample) {
      sample.push({ values, row, problem });
      if (!problem) sampled += 1;
      if (sampled >= SAMPLE_ROWS) await startScan();
      continue;
    }
    await visit(values, row, problem);
  }
  if (sample) await startScan();
  await flushExternal();
  if (rowsTotal === 0) {
    if (header.length === 0) await readHeaderAndSample(deps, context); // throws the precise error
    throw permanent('NO_ROWS', 'the file has a header but no data rows');
  }
  await deps.store.reportProgress(job.id, 'analyze-duplicates', { rowsTotal, rowsProcessed: rowsTotal });
  const done = scan as RowScan | null;
  if (done?.addresses) context.addresses = done.addresses;
  const output: AnalyzeOutput = {
    rowsTotal,
    columns: header.length,
    idColumn: done && done.idIndex >= 0 ? (header[done.idIndex] ?? null) : null,
    internal,
    external,
    ...(detected ? { detected } : {}),
    ...(done?.tally ? { validation: done.tally } : {}),
  };
  return { output };
}

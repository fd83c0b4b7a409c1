import { permanent } from '../../domain/ingest/failures.ts';
import {
  addressToGeocode,
  checkRow,
  columnPositions,
  type RowProblem,
  rowShapeProblem,
} from '../../domain/ingest/rows.ts';
import { assertUsableHeader, type DetectedSchema, type FieldMapping } from '../../domain/ingest/schema.ts';
import type { SourceFiles } from '../../ports/ingest/source-files.ts';
import type { IngestFile, IngestJob } from '../../domain/ingest/imports.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';

// Reading an import's rows for the stages of run-ingest-job.ts: the header checked, each row with
// its number and, when it cannot become an event at all, its problem (counted, never dropped).

export const SAMPLE_ROWS = 1000;
const MAX_ROW_ERRORS = 50;

/** What the readers need of a stage's context. */
type RowsContext = { job: IngestJob; file: IngestFile };

export type RowTally = {
  mapping: FieldMapping;
  validRows: number;
  addressRows: number;
  invalidRows: number;
  rowErrors: { row: number; field: string; message: string }[];
};

/**
 * A failure no retry can mend (an unreadable file) leaves no empty dataset behind when the upload
 * created the dataset for this job (a dataset named in the settings is the user's and stays). A
 * sheet without a target of its own got a new dataset too.
 */
export async function discardCreatedDataset(
  deps: { store: IngestStore },
  job: IngestJob,
  file: IngestFile,
): Promise<void> {
  const target = file.settings.targets[job.sheetIndex];
  if (job.datasetId === null || (target && 'datasetId' in target)) return;
  await deps.store.removeEmptyDataset(job.datasetId);
}

type DataRow = { header: string[]; values: string[]; row: number; problem: RowProblem | null };

/**
 * Reads every data row of the job's sheet with its 1-based row number, after checking the header. A
 * row that cannot become an event whatever its values (malformed, ragged, too large) comes with its
 * problem and no values: every stage counts it as an invalid row, none drops it silently.
 */
export async function* dataRows(deps: { files: SourceFiles }, context: RowsContext): AsyncGenerator<DataRow> {
  let header: string[] | null = null;
  let row = 0;
  const shape = { shortRowsAllowed: context.file.format !== 'csv' };
  for await (const read of deps.files.rows(context.file, context.job.sheetIndex)) {
    if (!header) {
      if (!Array.isArray(read))
        throw permanent('INVALID_FORMAT', `the header row cannot be read: ${read.malformed}`);
      header = read;
      assertUsableHeader(header);
      continue;
    }
    if (Array.isArray(read) && read.length === 1 && read[0] === '') continue;
    row += 1;
    const problem = rowShapeProblem(header, read, shape);
    yield { header, values: problem || !Array.isArray(read) ? [] : read, row, problem };
  }
  if (!header) throw permanent('INVALID_FORMAT', 'the file is empty');
}

export async function readHeaderAndSample(
  deps: { files: SourceFiles },
  context: RowsContext,
): Promise<{ header: string[]; sample: string[][] }> {
  let header: string[] = [];
  const sample: string[][] = [];
  let firstProblem: (RowProblem & { row: number }) | null = null;
  for await (const { header: h, values, row, problem } of dataRows(deps, context)) {
    header = h;
    if (problem) firstProblem ??= { row, ...problem };
    else sample.push(values);
    if (sample.length >= SAMPLE_ROWS) break;
  }
  if (sample.length === 0 && firstProblem) {
    throw permanent(
      'NO_VALID_ROWS',
      `no row of the file can be read; row ${firstProblem.row}: ${firstProblem.field} ${firstProblem.message}`,
    );
  }
  if (sample.length === 0) throw permanent('NO_ROWS', 'the file has a header but no data rows');
  return { header, sample };
}

export function idColumnIndex(header: string[], schema: DetectedSchema | null, context: RowsContext): number {
  const named = context.job.config.fieldMapping.id ?? schema?.mapping.id;
  return named ? header.indexOf(named) : -1;
}

/** What one pass over the rows learns for analyze-duplicates and validate-schema. */
export type RowScan = {
  idIndex: number;
  check(values: string[], row: number, problem: RowProblem | null): void;
  tally: RowTally | null;
  addresses: Set<string> | null;
};

export function rowScan(header: string[], schema: DetectedSchema, context: RowsContext): RowScan {
  const idIndex = idColumnIndex(header, schema, context);
  // Without a timestamp column detect-schema stops the job; there is nothing to check.
  if (!schema.mapping.timestamp) return { idIndex, check() {}, tally: null, addresses: null };
  const columns = columnPositions(header, schema.mapping);
  const tally: RowTally = {
    mapping: schema.mapping,
    validRows: 0,
    addressRows: 0,
    invalidRows: 0,
    rowErrors: [],
  };
  const addresses = columns.address >= 0 && context.job.config.geocoding ? new Set<string>() : null;
  return {
    idIndex,
    tally,
    addresses,
    check(values, row, problem) {
      const result = problem ? ({ ok: false, problem } as const) : checkRow(header, values, columns);
      if (result.ok) {
        tally.validRows += 1;
        const address = result.location ? null : addressToGeocode(values, columns);
        if (address) {
          tally.addressRows += 1;
          addresses?.add(address);
        }
      } else {
        tally.invalidRows += 1;
        if (tally.rowErrors.length < MAX_ROW_ERRORS) tally.rowErrors.push({ row, ...result.problem });
      }
    },
  };
}

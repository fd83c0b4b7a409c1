import type { RowTally } from '../job-rows.ts';
import type { DetectedSchema, SchemaDrift } from '../../../domain/ingest/schema.ts';

// What each stage hands on to the stages after it: its task output, stored with its stage record
// (ingest_job_stages.output) when it completes, so that a restarted run reads it back instead of
// running the stage again.

export type AnalyzeOutput = {
  rowsTotal: number;
  columns: number;
  idColumn: string | null;
  internal: number;
  external: number;
  /**
   * The schema detected from the first SAMPLE_ROWS readable rows (the rows detect-schema would
   * read), the column names and how many rows it was detected from: detect-schema checks and passes
   * on this schema instead of reading the file again. Absent in outputs stored before it was kept
   * (detect-schema then reads the sample itself, which detects the same schema).
   */
  detected?: { schema: DetectedSchema; header: string[]; sampleRows: number };
  /** validate-schema's row checks, made in the same pass with `detected.schema`. */
  validation?: RowTally;
};

export type DetectOutput = DetectedSchema;

export type ValidateOutput = {
  validRows: number;
  /** Valid rows without coordinates of their own but with an address: geocode-batch's work. */
  addressRows?: number;
  invalidRows: number;
  rowErrors: { row: number; field: string; message: string }[];
  drift: SchemaDrift | null;
};

export type ReviewOutput = { reasons: string[] };

export type SchemaVersionOutput = { version: number; created: boolean };

/**
 * Distinct addresses: `found` located, `failed` not (of which `lowConfidence` found a place but under
 * the confidence threshold, `notFound` found none).
 */
export type GeocodeOutput = {
  addresses: number;
  found: number;
  failed: number;
  notFound?: number;
  lowConfidence?: number;
};

export type EventCounters = {
  created: number;
  updated: number;
  duplicates: number;
  invalid: number;
  geocoded: number;
};

export type CreateEventsOutput = EventCounters & { rowsTotal: number };

/**
 * The output type of each task stage, so that a later stage reads an earlier one's output typed
 * (outputOf in stage-context.ts indexes it by TaskStage: a stage without an entry does not compile).
 */
export type StageOutputs = {
  'analyze-duplicates': AnalyzeOutput;
  'detect-schema': DetectOutput;
  'validate-schema': ValidateOutput;
  'needs-review': ReviewOutput;
  'create-schema-version': SchemaVersionOutput;
  'geocode-batch': GeocodeOutput;
  'create-events': CreateEventsOutput;
};

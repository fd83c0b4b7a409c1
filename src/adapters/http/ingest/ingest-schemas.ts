import { Type } from 'typebox';
import { ID_STRATEGIES } from '../../../domain/ingest/rows.ts';
import type { ScheduledRun } from '../../../ports/ingest/schedule-store.ts';

// Response shapes of the ingestion endpoints (spec: GET /api/ingest/{ingestId}/progress, Ingestion
// recovery endpoints). Shared by the route files and registered once for OpenAPI.

const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableNumber = Type.Union([Type.Number(), Type.Null()]);
const Loose = (description: string) => Type.Object({}, { additionalProperties: true, description });

const IngestJobDoc = Type.Object(
  {
    id: Type.Integer(),
    ingestFile: Type.Integer(),
    sheetIndex: Type.Integer(),
    sheetName: NullableString,
    dataset: NullableNumber,
    datasetName: NullableString,
    stage: Type.String({
      description:
        'The stage: kebab-case (analyze-duplicates … needs-review, completed, failed) on ingest-named routes, UPPER_CASE on import-named ones',
    }),
    config: Loose('field mapping, id strategy, duplicate handling, geocoding, schema mode'),
    errorLog: Type.Union([
      Loose('lastError, code, failedStage, classification, recoveryAttempt, failedAt'),
      Type.Null(),
    ]),
    reviewReasons: Type.Union([Type.Array(Type.String()), Type.Null()]),
    approvedAt: NullableString,
    retryAttempts: Type.Integer(),
    lastRetryAt: NullableString,
    nextRetryAt: NullableString,
    failedAt: NullableString,
    completedAt: NullableString,
    createdAt: Type.String(),
  },
  { $id: 'IngestJobDoc' },
);

const IngestFileDoc = Type.Object(
  {
    id: Type.Integer(),
    originalName: Type.String(),
    status: Type.String(),
    catalog: NullableNumber,
    datasets: Type.Array(Type.Integer()),
    sizeBytes: Type.Integer(),
    format: Type.String(),
    source: Type.String(),
    uploadedBy: NullableNumber,
    settings: Loose('settings chosen on upload'),
    errorLog: Type.Array(Type.String()),
    jobs: Type.Array(Type.Ref('IngestJobDoc')),
    createdAt: Type.String(),
    updatedAt: Type.String(),
    completedAt: NullableString,
  },
  { $id: 'IngestFileDoc' },
);

const Stage = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  status: Type.Union(['pending', 'in_progress', 'completed', 'skipped'].map((s) => Type.Literal(s))),
  state: Type.Union(
    ['pending', 'in_progress', 'completed', 'skipped', 'failed', 'waiting'].map((s) => Type.Literal(s)),
    {
      description:
        'Beyond the spec: what the stage is. `failed`: the stage the job failed at (`status` stays `in_progress`); ' +
        '`waiting`: needs-review while the job waits for a review (`status` `in_progress`, not completed).',
    },
  ),
  progress: Type.Number({ minimum: 0, maximum: 100 }),
  weight: Type.Number(),
  startedAt: NullableString,
  completedAt: NullableString,
  batches: Type.Object({ current: Type.Number(), total: Type.Number() }),
  currentBatch: Type.Object({
    rowsProcessed: Type.Integer(),
    rowsTotal: Type.Integer(),
    percentage: Type.Number(),
  }),
  rows: Type.Object(
    { processed: Type.Integer(), total: Type.Integer() },
    {
      description:
        'Beyond the spec: the rows the stage has done of its total (file rows; addresses for geocode-batch; the ' +
        'sampled rows for detect-schema)',
    },
  ),
  performance: Type.Object({ rowsPerSecond: NullableNumber, estimatedSecondsRemaining: NullableNumber }),
});

const Duplicates = Type.Object({ internal: Type.Number(), external: Type.Number() });

const ProgressCommon = {
  id: Type.Union([Type.String(), Type.Number()]),
  status: Type.String(),
  originalName: Type.String(),
  catalogId: NullableNumber,
  datasetsCount: Type.Integer(),
  datasetsProcessed: Type.Integer(),
  overallProgress: Type.Number({ minimum: 0, maximum: 100 }),
  estimatedCompletionTime: NullableString,
  errorLog: Type.Optional(Type.Array(Type.String())),
  completedAt: Type.Optional(Type.String()),
  createdAt: Type.String(),
};

const IngestProgress = Type.Object(
  {
    type: Type.Literal('ingest-file'),
    ...ProgressCommon,
    jobs: Type.Array(
      Type.Object({
        id: Type.Integer(),
        datasetId: NullableNumber,
        datasetName: Type.Optional(Type.String()),
        currentStage: Type.String(),
        overallProgress: Type.Number({ minimum: 0, maximum: 100 }),
        estimatedCompletionTime: NullableString,
        stages: Type.Array(Stage),
        errors: Type.Integer(),
        duplicates: Duplicates,
        schemaValidation: Type.Optional(Loose('validRows, invalidRows, drift, requiresApproval')),
        results: Type.Optional(
          Loose(
            'created, updated, duplicates, invalid, geocoded (rows); geocoding: { addresses, located, notFound, lowConfidence } (distinct addresses)',
          ),
        ),
      }),
    ),
  },
  { $id: 'IngestProgress' },
);

const ImportProgress = Type.Object(
  {
    type: Type.Literal('import-file'),
    ...ProgressCommon,
    jobs: Type.Array(
      Type.Object({
        id: Type.Integer(),
        datasetId: NullableNumber,
        stage: Type.String({
          description:
            'UPLOAD, SCHEMA_DETECTION, AWAITING_APPROVAL, VALIDATION, GEOCODING, PROCESSING, COMPLETED, FAILED',
        }),
        progress: Type.Number(),
        rowsTotal: Type.Integer(),
        rowsProcessed: Type.Integer(),
        batchNumber: Type.Integer(),
        errors: Type.Integer(),
        duplicates: Duplicates,
        schemaValidation: Type.Optional(Loose('validRows, invalidRows, drift')),
        geocodingProgress: Type.Optional(Type.Object({ current: Type.Number(), total: Type.Number() })),
        results: Type.Optional(
          Loose(
            'created, updated, duplicates, invalid, geocoded (rows); geocoding: { addresses, located, notFound, lowConfidence } (distinct addresses)',
          ),
        ),
      }),
    ),
  },
  { $id: 'ImportProgress' },
);

export const RetrySuccess = Type.Object({
  success: Type.Literal(true),
  action: Type.Literal('retry_scheduled'),
  message: Type.String(),
  retryScheduled: Type.Literal(true),
  nextRetryAt: Type.String(),
});

const RetryRefusal = (action: string, status: number) =>
  Type.Object({
    success: Type.Literal(false),
    action: Type.Literal(action),
    error: Type.String(),
    statusCode: Type.Literal(status),
  });

export const ResetResult = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  stage: Type.String(),
});

export const Recommendations = Type.Object({
  recommendations: Type.Array(
    Type.Object({
      importJobId: Type.Integer(),
      importFileName: Type.String(),
      stage: Type.String(),
      failedAt: Type.String(),
      errorClassification: Type.Object({
        type: Type.String({ description: 'recoverable | permanent | user_action_required' }),
        retryable: Type.Boolean(),
        reason: Type.String(),
      }),
      recommendedAction: Type.Union(
        [
          'automatic_retry',
          'wait_for_quota_reset',
          'manual_intervention',
          'approve_schema_changes',
          'max_retries_exceeded',
        ].map((a) => Type.Literal(a)),
      ),
      retryCount: Type.Integer(),
      nextRetryAt: Type.Optional(Type.String()),
      details: Type.String(),
    }),
  ),
});

export const SchemaPreview = Type.Object({
  fileName: Type.String(),
  format: Type.String(),
  sheets: Type.Array(
    Type.Object({
      index: Type.Integer(),
      name: Type.Union([Type.String(), Type.Null()]),
      rowsSampled: Type.Integer(),
      fields: Type.Array(Type.Object({ name: Type.String(), type: Type.String(), nullable: Type.Boolean() })),
      mapping: Type.Object(
        {},
        {
          additionalProperties: true,
          description: 'timestamp, latitude, longitude, coordinates, address, title, id',
        },
      ),
      sample: Type.Array(Type.Array(Type.String())),
      addressProposal: Type.Optional(
        Type.Object(
          {
            fieldMapping: Type.Object({ address: Type.Array(Type.String()) }),
            example: Type.Union([Type.String(), Type.Null()]),
          },
          {
            description:
              'City-, region- and country-like columns to geocode together: send `fieldMapping` back in the settings to use them.',
          },
        ),
      ),
      rowCount: Type.Optional(
        Type.Object(
          { total: Type.Integer(), complete: Type.Boolean() },
          {
            description:
              'validate-preview only: the data rows of the sheet (complete false: at least this many)',
          },
        ),
      ),
      problem: Type.Optional(Type.String()),
    }),
  ),
});

/** Schemas referenced by `$ref` from the ingestion routes, registered once at the root. */
export const INGEST_SHARED_SCHEMAS = [IngestJobDoc, IngestFileDoc, IngestProgress, ImportProgress];

/** A record id: a positive integer a bigint column can hold (larger ones are a 400, not a 5xx). */

// The multipart forms of the upload routes, for the OpenAPI document only (schema.documentedBody):
// the handlers read the parts themselves as they stream, so Fastify never validates these.
const UploadedFile = Type.String({
  format: 'binary',
  description: 'The file: CSV (any delimiter, UTF-8 with or without BOM, or Latin-1), XLSX or ODS.',
});
const SettingsField = Type.String({
  contentMediaType: 'application/json',
  description: 'JSON settings (see the operation description).',
});

export const UploadForm = Type.Object({
  file: UploadedFile,
  catalog: Type.String({
    pattern: '^[1-9][0-9]*$',
    description: 'Catalog id (also accepted as `catalogId`).',
  }),
  dataset: Type.Optional(
    Type.String({ pattern: '^([1-9][0-9]*|new)$', description: 'Dataset id or `new` (the default).' }),
  ),
  settings: Type.Optional(SettingsField),
});

export const PreviewForm = Type.Object({ file: UploadedFile, settings: Type.Optional(SettingsField) });

/** A run of a scheduled import, as its manual trigger and the shared webhook answer it. */
export const ScheduledRunDoc = Type.Object({
  id: Type.Integer(),
  scheduledIngest: Type.Integer(),
  dueAt: Type.String(),
  triggeredBy: Type.String(),
  status: Type.String(),
});

export const scheduledRunDoc = (r: ScheduledRun) => ({
  id: r.id,
  scheduledIngest: r.scheduledIngestId,
  dueAt: r.dueAt,
  triggeredBy: r.triggeredBy,
  status: r.status,
});

// The bodies of the job routes (ingest-job-routes.ts): PATCH /api/ingest-jobs/{id} and POST .../reset.

const Literals = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

/** The settings a PATCH of an ingest job may change (its `config`); nothing else is accepted. */
const ConfigPatch = Type.Object(
  {
    fieldMapping: Type.Optional(
      Type.Object(
        Object.fromEntries(
          ['timestamp', 'latitude', 'longitude', 'coordinates', 'address', 'title', 'id'].map((k) => [
            k,
            Type.Optional(
              k === 'address'
                ? Type.Union([
                    Type.String({ minLength: 1, maxLength: 300 }),
                    Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { minItems: 1, maxItems: 8 }),
                  ])
                : Type.String({ minLength: 1 }),
            ),
          ]),
        ),
        { additionalProperties: false },
      ),
    ),
    idStrategy: Type.Optional(Literals(ID_STRATEGIES)),
    duplicateHandling: Type.Optional(Literals(['skip', 'update'])),
    geocoding: Type.Optional(Type.Boolean()),
    schemaMode: Type.Optional(Literals(['strict', 'additive', 'flexible'])),
  },
  { additionalProperties: false },
);

/** A job as GET /api/ingest-jobs/{id} answers it (registered once as `IngestJobDoc`). */
export const JobDocRef = Type.Ref('IngestJobDoc');
/** A retry's 400: the job is not in a state to retry, or the request itself is wrong. */
export const RetryNotRetryable = Type.Union([RetryRefusal('not_retryable', 400), Type.Ref('ErrorBody')]);
/** A retry's 403: the caller's quota has no room for the job's events (or a read-only API key's ErrorBody). */
export const RetryOverQuota = Type.Union([RetryRefusal('quota_exceeded', 403), Type.Ref('ErrorBody')]);

export const JobRevision = Type.Object(
  { approved: Type.Optional(Type.Boolean()), config: Type.Optional(ConfigPatch) },
  { additionalProperties: false },
);
export const RevisedJob = Type.Object({ doc: JobDocRef, message: Type.String() });
export const ResetRequest = Type.Object(
  { stage: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);

import { Type } from 'typebox';
import type { IngestDraft } from '../../../ports/ingest/ingest-drafts.ts';

// The import wizard's records as the routes show them.

const NullableString = Type.Union([Type.String(), Type.Null()]);

const IngestDraftDoc = Type.Object(
  {
    id: Type.Number({ description: 'The upload id that configure and validate-preview take (`draft`)' }),
    originalName: Type.String(),
    catalog: Type.Number(),
    uploadedBy: Type.Number(),
    sizeBytes: Type.Number(),
    format: Type.String(),
    sheets: Type.Array(Type.Union([Type.String(), Type.Null()]), {
      description: 'Sheet names of a workbook by index; [null] for a CSV',
    }),
    configuration: Type.Object(
      { settings: Type.Optional(Type.Unknown()), dataset: Type.Optional(Type.Unknown()) },
      { description: 'The stored settings and dataset, applied when the import starts' },
    ),
    configuredAt: NullableString,
    startedFile: Type.Union([Type.Number(), Type.Null()], {
      description: 'The ingest file it became once started',
    }),
    expiresAt: Type.String(),
    createdAt: Type.String(),
  },
  { $id: 'IngestDraftDoc' },
);

export const ConfigurationProblemDoc = Type.Object({
  field: Type.String({ description: 'The setting the problem is in, e.g. settings.fieldMapping.timestamp' }),
  code: Type.String({
    description:
      'MISSING_COLUMN, SHEET_OUT_OF_RANGE, DATASET_NOT_IN_CATALOG, SHEET_UNREADABLE, or a settings error',
  }),
  message: Type.String(),
  sheetIndex: Type.Optional(Type.Number()),
});

const Limit = Type.Union([Type.Number(), Type.Null()], { description: 'null: unlimited' });

/** One quota against the file (domain/ingest/import-allowance.ts). */
const QuotaVerdictDoc = Type.Object({
  quota: Type.String({
    description: 'fileUploadsPerDay, importJobsPerDay, maxFileSizeMB, eventsPerImport or totalEvents',
  }),
  needed: Type.Number({
    description: 'What the file takes: 1 upload, one job per sheet, its bytes, its rows',
  }),
  limit: Limit,
  remaining: Type.Union([Type.Number(), Type.Null()], { description: 'Before this import; null: unlimited' }),
  consequence: Type.Union([Type.Literal('fits'), Type.Literal('refused'), Type.Literal('stops')], {
    description:
      'refused: the start is refused (403 quota_exceeded); stops: the import starts and stops at the limit, ' +
      'the events before it stored',
  }),
  message: Type.String({ description: 'What will happen, with the numbers' }),
});

export const AllowanceDoc = Type.Union(
  [
    Type.Object({
      allowed: Type.Boolean({ description: 'false: a quota refuses the start' }),
      maxFileBytes: Type.Number({
        description: "The largest file the caller may upload (service's or level's limit)",
      }),
      verdicts: Type.Array(QuotaVerdictDoc),
    }),
    Type.Null(),
  ],
  {
    description:
      "The caller's quotas against this file, said before the start; null while the settings do not parse",
  },
);

export const SheetDriftDoc = Type.Object({
  sheetIndex: Type.Integer(),
  datasetId: Type.Integer(),
  version: Type.Integer({
    description: "The dataset's current schema version the columns are compared with",
  }),
  added: Type.Array(Type.String()),
  removed: Type.Array(Type.String()),
  changed: Type.Array(Type.Object({ name: Type.String(), from: Type.String(), to: Type.String() })),
  breaking: Type.Boolean({
    description:
      'Under the chosen schemaMode: the import will stop at validate-schema until the change is approved',
  }),
  description: Type.String(),
});

export const WIZARD_SCHEMAS = [IngestDraftDoc];

export function draftDoc(draft: IngestDraft) {
  return {
    id: draft.id,
    originalName: draft.originalName,
    catalog: draft.catalogId,
    uploadedBy: draft.uploadedBy,
    sizeBytes: draft.sizeBytes,
    format: draft.format,
    sheets: draft.sheets,
    configuration: draft.configuration,
    configuredAt: draft.configuredAt,
    startedFile: draft.startedFileId,
    expiresAt: draft.expiresAt,
    createdAt: draft.createdAt,
  };
}

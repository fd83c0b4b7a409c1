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

import { Type } from 'typebox';
import { RecordId } from '../schemas.ts';
import { SchemaPreview } from './ingest-schemas.ts';
import { AllowanceDoc, ConfigurationProblemDoc, SheetDriftDoc } from './wizard-docs.ts';

// The schemas of the wizard's steps (wizard-routes.ts): the settings and target a draft is configured with.
const Settings = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'As on upload: fieldMapping {timestamp, latitude, longitude, coordinates, address, title, id}, idStrategy, ' +
      'duplicateHandling, geocoding, schemaMode, sheets [{sheetIndex, dataset}]',
  },
);
const Dataset = Type.Union([RecordId, Type.Literal('new'), Type.Object({}, { additionalProperties: true })], {
  description: 'Target of sheet 0: a dataset id of the catalog, "new" (default) or {newDataset: {title}}',
});
const DraftBody = {
  draft: Type.Integer({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The upload id ({draft: {id}})',
  }),
  settings: Type.Optional(Settings),
  dataset: Type.Optional(Dataset),
};

export const DraftStart = Type.Object(
  { ...DraftBody, start: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const DraftSaved = Type.Object({ draft: Type.Ref('IngestDraftDoc'), message: Type.String() });

export const DraftUploaded = Type.Object({
  doc: Type.Ref('IngestFileDoc'),
  draft: Type.Ref('IngestDraftDoc'),
  message: Type.String(),
});

export const DraftCheck = Type.Object(DraftBody, { additionalProperties: false });

export const DraftValidity = Type.Object({
  valid: Type.Boolean(),
  problems: Type.Array(ConfigurationProblemDoc),
  draft: Type.Ref('IngestDraftDoc'),
  ...SchemaPreview.properties,
  drift: Type.Array(SheetDriftDoc),
  allowance: AllowanceDoc,
});

export const DraftFromUrl = Type.Object(
  { url: Type.String({ minLength: 1, maxLength: 2048 }), settings: Type.Optional(Settings) },
  { additionalProperties: false },
);

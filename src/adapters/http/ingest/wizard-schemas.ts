import { Type } from 'typebox';
import { RecordId } from '../schemas.ts';

// The schemas of the wizard's steps (wizard-routes.ts): the settings and target a draft is configured with.
export const Settings = Type.Object(
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
export const DraftBody = {
  draft: Type.Integer({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'The upload id ({draft: {id}})',
  }),
  settings: Type.Optional(Settings),
  dataset: Type.Optional(Dataset),
};

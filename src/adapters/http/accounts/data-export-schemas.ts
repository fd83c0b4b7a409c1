import { Type } from 'typebox';

// The schemas of a user's own-data export (data-export-routes.ts).

const NullableString = Type.Union([Type.String(), Type.Null()]);
export const DataExportDoc = Type.Object({
  id: Type.Number(),
  status: Type.String({ description: 'queued, running, ready or failed' }),
  sizeBytes: Type.Union([Type.Number(), Type.Null()]),
  error: NullableString,
  expiresAt: NullableString,
  expired: Type.Boolean(),
  createdAt: Type.String(),
  finishedAt: NullableString,
  download: NullableString,
});

export const DataExportRequested = Type.Object({ doc: DataExportDoc, message: Type.String() });

export const DataExportZip = Type.String({ description: 'The ZIP', contentMediaType: 'application/zip' });

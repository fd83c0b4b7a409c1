import { Type } from 'typebox';

// Row-schema pieces shared by the scraper stores.

export const RunStatusColumn = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('success'),
  Type.Literal('failed'),
  Type.Literal('timeout'),
]);

import { type TSchema, Type } from 'typebox';

// Row-schema pieces shared by the scraper stores.

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const RunStatusColumn = Type.Union([
  Type.Literal('queued'),
  Type.Literal('running'),
  Type.Literal('success'),
  Type.Literal('failed'),
  Type.Literal('timeout'),
]);

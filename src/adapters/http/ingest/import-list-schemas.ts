import { ImportOutcomeDoc } from '../import-outcome-doc.ts';
import { Type } from 'typebox';
import type { FieldWhitelist } from '../../../domain/read/where.ts';
import { COLLECTION_PAGING } from '../../../domain/collections/collections.ts';
import { OPERATORS } from '../../../domain/read/where.ts';

// The schemas of the import lists (import-list-routes.ts): their list query, a scheduled run with its
// import's outcome, a catalog with its datasets.
/** Payload's list query (where/sort/limit/page) over a whitelist. */
export function listQuerySchema(fields: FieldWhitelist) {
  return Type.Object(
    {
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: COLLECTION_PAGING.maxLimit })),
      page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
      sort: Type.Optional(Type.String({ maxLength: 200 })),
      depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })),
    },
    {
      additionalProperties: false,
      patternProperties: { '^where\\[': {} },
      description:
        `Filter with where[field][operator]=value (and where[or][0]... / where[and][...]). ` +
        `Fields: ${Object.keys(fields).join(', ')}. Operators: ${OPERATORS.join(', ')}. Newest first by default.`,
    },
  );
}

export const RunRecordDoc = Type.Object({
  id: Type.Number(),
  dueAt: Type.String(),
  triggeredBy: Type.String(),
  status: Type.String({ description: 'queued, fetching, imported or failed' }),
  ingestFile: Type.Union([Type.Number(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
  finishedAt: Type.Union([Type.String(), Type.Null()]),
  import: ImportOutcomeDoc,
});

export const CatalogWithDatasetsDoc = Type.Object({
  id: Type.Number(),
  slug: Type.String(),
  title: Type.String(),
  isPublic: Type.Boolean(),
  datasets: Type.Array(
    Type.Object({ id: Type.Number(), slug: Type.String(), title: Type.String(), isPublic: Type.Boolean() }),
  ),
});

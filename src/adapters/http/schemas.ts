import { type TSchema, Type } from 'typebox';
import { TRUST_LEVELS } from '../../domain/accounts/users.ts';
import {
  COLLECTION_FIELDS,
  COLLECTION_PAGING,
  type CollectionSlug,
} from '../../domain/collections/collections.ts';
import { OPERATORS } from '../../domain/read/where.ts';
import { UNPAGINATED_MAX } from '../../domain/collections/payload-options.ts';

// Schemas shared by the routes of several features.

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    email: Type.String(),
    role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
    trustLevel: Type.Integer({ minimum: 0, maximum: 5, description: trustLevelDescription() }),
  },
  { $id: 'User' },
);

export const MessageSchema = Type.Object({ message: Type.String() });

export const NoQuery = Type.Object({}, { additionalProperties: false });

function trustLevelDescription(): string {
  return `Trust level: ${Object.entries(TRUST_LEVELS)
    .map(([level, name]) => `${level} ${name}`)
    .join(', ')}`;
}

/** A record's id in a path or a body: a positive integer JavaScript holds exactly. */
export const RecordId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });

export const IdParams = Type.Object({ id: RecordId }, { additionalProperties: false });

/** Payload's list body: a page of documents and the paging fields. */
export const PageSchema = (docRef: TSchema) =>
  Type.Object({
    docs: Type.Array(docRef),
    totalDocs: Type.Integer(),
    limit: Type.Integer(),
    page: Type.Integer(),
    totalPages: Type.Integer(),
    hasNextPage: Type.Boolean(),
    hasPrevPage: Type.Boolean(),
    nextPage: Type.Union([Type.Integer(), Type.Null()]),
    prevPage: Type.Union([Type.Integer(), Type.Null()]),
    pagingCounter: Type.Integer(),
  });

/** Payload's list query (where/sort/limit/page/depth) over a collection's fields, for every collection. */
export const ListQuerySchema = (collection: CollectionSlug) =>
  Type.Object(
    {
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: COLLECTION_PAGING.maxLimit,
          description: `Page size (default ${COLLECTION_PAGING.defaultLimit})`,
        }),
      ),
      page: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page number' })),
      sort: Type.Optional(
        Type.String({
          maxLength: 200,
          description: 'Field name, `-field` for descending; several separated by commas',
        }),
      ),
      depth: Type.Optional(
        Type.Integer({
          minimum: 0,
          maximum: 10,
          description: 'Accepted for Payload clients; relations are always ids',
        }),
      ),
      pagination: Type.Optional(
        Type.Union([Type.Literal('true'), Type.Literal('false')], {
          description:
            `\`false\`: every matching document in one answer (Payload's pagination=false), at most ${UNPAGINATED_MAX}; ` +
            'a query that matches more is a 400 PAGINATION_CAP (page with limit and page instead).',
        }),
      ),
    },
    {
      additionalProperties: false,
      patternProperties: { '^where\\[': {}, '^select\\[': {} },
      description:
        `Filter with where[field][operator]=value, and where[or][0][field][operator]=value / where[and][...]. ` +
        `Fields: ${Object.keys(COLLECTION_FIELDS[collection]).join(', ')}. Operators: ${OPERATORS.join(', ')}. ` +
        "Payload's select: select[field]=true for only those fields (and the id), select[field]=false for all but those.",
    },
  );

import { type TSchema, Type } from 'typebox';
import { TRUST_LEVELS } from '../../domain/accounts/users.ts';

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

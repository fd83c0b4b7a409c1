import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from 'typebox';
import {
  type CollectionDeps,
  createDocument,
  deleteDocument,
  type ListQuery,
  updateDocument,
} from '../../../application/collections/collection-documents.ts';
import {
  countDocuments,
  listDocuments,
  readDocument,
} from '../../../application/collections/payload-queries.ts';
import { UNPAGINATED_MAX } from '../../../domain/collections/payload-options.ts';
import {
  COLLECTION_FIELDS,
  COLLECTION_PAGING,
  type CollectionSlug,
  type DocumentCollectionSlug,
  MAX_DATE_FIELDS,
} from '../../../domain/collections/collections.ts';
import { OPERATORS } from '../../../domain/read/where.ts';
import { errorResponses } from '../error-body.ts';
import { PageSchema } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import { MAX_SLUG_LENGTH, SLUG_PATTERN } from '../../../domain/collections/slugs.ts';
import { MAX_PAGE_OFFSET } from '../../../domain/read/page-depth.ts';

// Payload CMS's REST conventions for every collection: GET/POST /api/{collection},
// GET/PATCH/DELETE /api/{collection}/{id}; lists answer {docs, totalDocs, limit, page, totalPages,
// hasNextPage, hasPrevPage, nextPage, prevPage, pagingCounter}, single documents {doc, message}.

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });
const Slug = Type.String({ pattern: SLUG_PATTERN.source, maxLength: MAX_SLUG_LENGTH });
const Title = Type.String({ minLength: 1, maxLength: 255 });
const TrustLevel = Type.Integer({ minimum: 0, maximum: 5 });
const Role = Type.Union([Type.Literal('admin'), Type.Literal('user')]);
const Location = Type.Object(
  {
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    latitude: Type.Number({ minimum: -90, maximum: 90 }),
  },
  { additionalProperties: false },
);
const strict = { additionalProperties: false } as const;

// Catalogs and datasets describe themselves the same way.
const describedDoc = {
  slug: Type.String(),
  title: Type.String(),
  description: Nullable(Type.String()),
  isPublic: Type.Boolean(),
  createdBy: Nullable(Type.Integer()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};
const describedInput = {
  slug: Slug,
  title: Title,
  description: Type.Optional(Nullable(Type.String({ maxLength: 10_000 }))),
  isPublic: Type.Optional(Type.Boolean()),
  createdBy: Type.Optional(Type.Integer({ minimum: 1 })),
};

// The custom date fields the read API's `dateField` parameter offers for this dataset's events
// (docs/api-v1.md, "Custom date fields"); each checked by parseDateFields in the use case.
const DateFields = Type.Optional(
  Type.Array(Type.String({ maxLength: 200 }), {
    maxItems: MAX_DATE_FIELDS,
    description:
      "Paths into the events' `data` that hold dates, such as `startDate` (stored without `data.`).",
  }),
);

type CollectionSchemas = { doc: TSchema; create: TSchema; update: TSchema; label: string; docId: string };

const SCHEMAS: Record<DocumentCollectionSlug, CollectionSchemas> = {
  users: {
    label: 'User',
    docId: 'UserDoc',
    doc: Type.Object(
      {
        id: Type.Integer(),
        email: Type.String(),
        role: Role,
        trustLevel: TrustLevel,
        createdAt: Timestamp,
        updatedAt: Timestamp,
      },
      { $id: 'UserDoc' },
    ),
    create: Type.Object(
      {
        email: Type.String({ maxLength: 320 }),
        password: Type.String({ maxLength: 1024 }),
        role: Type.Optional(Role),
        trustLevel: Type.Optional(TrustLevel),
      },
      strict,
    ),
    update: Type.Object(
      {
        email: Type.Optional(Type.String({ maxLength: 320 })),
        password: Type.Optional(Type.String({ maxLength: 1024 })),
        role: Type.Optional(Role),
        trustLevel: Type.Optional(TrustLevel),
      },
      strict,
    ),
  },
  catalogs: {
    label: 'Catalog',
    docId: 'CatalogDoc',
    doc: Type.Object({ id: Type.Integer(), ...describedDoc }, { $id: 'CatalogDoc' }),
    create: Type.Object(describedInput, strict),
    update: Type.Partial(Type.Object(describedInput), strict),
  },
  datasets: {
    label: 'Dataset',
    docId: 'DatasetDoc',
    doc: Type.Object(
      { id: Type.Integer(), catalog: Type.Integer(), ...describedDoc, dateFields: Type.Array(Type.String()) },
      { $id: 'DatasetDoc' },
    ),
    create: Type.Object(
      { catalog: Type.Integer({ minimum: 1 }), ...describedInput, dateFields: DateFields },
      strict,
    ),
    update: Type.Partial(
      Type.Object({ catalog: Type.Integer({ minimum: 1 }), ...describedInput, dateFields: DateFields }),
      strict,
    ),
  },
  events: {
    label: 'Event',
    docId: 'EventDoc',
    doc: Type.Object(
      {
        id: Type.Integer(),
        dataset: Type.Integer(),
        catalog: Type.Integer(),
        uniqueId: Type.String(),
        title: Nullable(Type.String()),
        data: Type.Record(Type.String(), Type.Unknown()),
        location: Nullable(Type.Object({ longitude: Type.Number(), latitude: Type.Number() })),
        eventTimestamp: Timestamp,
        isValid: Type.Boolean(),
        createdAt: Timestamp,
        updatedAt: Timestamp,
      },
      { $id: 'EventDoc' },
    ),
    create: Type.Object(
      {
        dataset: Type.Integer({ minimum: 1 }),
        uniqueId: Type.String({ minLength: 1, maxLength: 255 }),
        title: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        location: Type.Optional(Nullable(Location)),
        eventTimestamp: Timestamp,
        isValid: Type.Optional(Type.Boolean()),
      },
      strict,
    ),
    update: Type.Object(
      {
        dataset: Type.Optional(Type.Integer({ minimum: 1 })),
        uniqueId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
        title: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
        data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        location: Type.Optional(Nullable(Location)),
        eventTimestamp: Type.Optional(Timestamp),
        isValid: Type.Optional(Type.Boolean()),
      },
      strict,
    ),
  },
};

export const collectionSchemas = Object.values(SCHEMAS).map((s) => s.doc);

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

/**
 * A select leaves out fields the response schema requires: such an answer is sent as JSON as it is
 * (parseSelect has checked every field name against the schema's), not through the schema's serializer.
 */
function selecting(query: unknown): boolean {
  return Object.keys(query as Record<string, unknown>).some((key) => key.startsWith('select['));
}

/** The fields `select` may name: the document's own (its response schema's properties). */
function docFields(schema: TSchema): string[] {
  return Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
}

const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

const tags = ['collections'];

export const collectionRoutes: FastifyPluginAsyncTypebox<CollectionDeps> = async (app, deps) => {
  for (const [collection, schemas] of Object.entries(SCHEMAS) as [
    DocumentCollectionSlug,
    CollectionSchemas,
  ][]) {
    const docRef = Type.Ref(schemas.docId);
    const fields = docFields(schemas.doc);
    const base = `/api/${collection}`;
    const one = Type.Object({ doc: docRef, message: Type.String() });
    const config = { rateLimit: true };
    // Writes need a login; accounts are not readable anonymously either.
    const write = { rateLimit: true, requiresUser: true };
    const read = collection === 'users' ? write : config;
    // Reads stop at the HTTP routes' request budget (client-gone.ts); a list's cost grows with the
    // data (`where`, `sort`), so it takes a place of the collections class while it runs
    // (concurrency-limit.ts).
    const readOne = { ...read, timeBudget: 'collections' as const };
    const list = { ...readOne, costly: 'collections' as const };

    app.get(
      base,
      {
        config: list,
        schema: {
          tags,
          summary: `List ${collection}`,
          description:
            'Only the documents the caller may read. 400 for an unknown field or operator, or a malformed value, and ' +
            `for a page that skips more than ${MAX_PAGE_OFFSET} documents (PAGE_TOO_DEEP: page on with ` +
            '`sort=id&where[id][greater_than]=<last id>`). 429 also when the caller runs too many lists at once.',
          querystring: ListQuerySchema(collection),
          response: {
            200: PageSchema(docRef),
            ...errorResponses(400, 429),
          },
        },
      },
      async (request, reply) => {
        const page = await listDocuments(
          deps,
          collection,
          viewerOf(request),
          request.query as ListQuery,
          fields,
        );
        return selecting(request.query) ? reply.serializer(JSON.stringify).send(page) : page;
      },
    );

    // Payload's count: before /:id (a static segment wins anyway; ids are integers).
    app.get(
      `${base}/count`,
      {
        config: list,
        schema: {
          tags,
          summary: `Count ${collection}`,
          description:
            "Payload's count: `{totalDocs}` of the documents the caller may read that match `where` (the list's filter and rules).",
          querystring: Type.Object(
            {},
            { additionalProperties: false, patternProperties: { '^where\\[': {} } },
          ),
          response: {
            200: Type.Object({ totalDocs: Type.Integer({ minimum: 0 }) }, { examples: [{ totalDocs: 42 }] }),
            ...errorResponses(400, 429),
          },
        },
      },
      async (request) => countDocuments(deps, collection, viewerOf(request), request.query as ListQuery),
    );

    app.get(
      `${base}/:id`,
      {
        config: readOne,
        schema: {
          tags,
          summary: `Read one ${schemas.label.toLowerCase()}`,
          description: '404 also when the document exists but the caller may not read it.',
          params: IdParams,
          querystring: Type.Object(
            { depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })) },
            { additionalProperties: false, patternProperties: { '^select\\[': {} } },
          ),
          response: { 200: docRef, ...errorResponses(400, 404, 429) },
        },
      },
      async (request, reply) => {
        const doc = await readDocument(
          deps,
          collection,
          viewerOf(request),
          request.params.id,
          request.query,
          fields,
        );
        return selecting(request.query) ? reply.serializer(JSON.stringify).send(doc) : doc;
      },
    );

    app.post(
      base,
      {
        config: write,
        schema: {
          tags,
          summary: `Create a ${schemas.label.toLowerCase()}`,
          querystring: Type.Object({}, strict),
          body: schemas.create,
          response: { 201: one, ...errorResponses(400, 401, 403, 409, 429) },
        },
      },
      async (request, reply) => {
        const doc = await createDocument(
          deps,
          collection,
          viewerOf(request),
          request.body as Record<string, unknown>,
        );
        return reply.status(201).send({ doc, message: `${schemas.label} successfully created.` });
      },
    );

    app.patch(
      `${base}/:id`,
      {
        config: write,
        schema: {
          tags,
          summary: `Update a ${schemas.label.toLowerCase()}`,
          description: 'Nobody raises their own role or trust level; only admins change them.',
          params: IdParams,
          querystring: Type.Object({}, strict),
          body: schemas.update,
          response: { 200: one, ...errorResponses(400, 401, 403, 404, 409, 429) },
        },
      },
      async (request) => {
        const doc = await updateDocument(
          deps,
          collection,
          viewerOf(request),
          request.params.id,
          request.body as Record<string, unknown>,
        );
        return { doc, message: 'Updated successfully.' };
      },
    );

    app.delete(
      `${base}/:id`,
      {
        config: write,
        schema: {
          tags,
          summary: `Delete a ${schemas.label.toLowerCase()}`,
          description: 'Deleting a catalog deletes its datasets and events; a dataset its events.',
          params: IdParams,
          querystring: Type.Object({}, strict),
          response: { 200: one, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => {
        const doc = await deleteDocument(deps, collection, viewerOf(request), request.params.id);
        return { doc, message: 'Deleted successfully.' };
      },
    );
  }
};

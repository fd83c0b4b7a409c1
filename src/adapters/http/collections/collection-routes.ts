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
import type { DocumentCollectionSlug } from '../../../domain/collections/collections.ts';
import { errorResponses } from '../error-body.ts';
import { ListQuerySchema, PageSchema } from '../schemas.ts';
import { viewerOf } from '../viewer.ts';
import { MAX_PAGE_OFFSET } from '../../../domain/read/page-depth.ts';
import { type CollectionSchemas, IdParams, SCHEMAS, strict } from './collection-schemas.ts';

// Payload CMS's REST conventions for every collection: GET/POST /api/{collection},
// GET/PATCH/DELETE /api/{collection}/{id}; lists answer {docs, totalDocs, limit, page, totalPages,
// hasNextPage, hasPrevPage, nextPage, prevPage, pagingCounter}, single documents {doc, message}.

const tags = ['collections'];

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

import fastJsonStringify, { type Schema as FjsSchema } from 'fast-json-stringify';
import Fastify from 'fastify';
import t from 'tap';
import { Type } from 'typebox';
import { authSchemas } from '../../../../src/adapters/http/accounts/auth-schemas.ts';
import { collectionSchemas } from '../../../../src/adapters/http/collections/collection-schemas.ts';
import { ErrorBody } from '../../../../src/adapters/http/error-body.ts';
import { INGEST_SHARED_SCHEMAS } from '../../../../src/adapters/http/ingest/ingest-schemas.ts';
import { WIZARD_SCHEMAS } from '../../../../src/adapters/http/ingest/wizard-docs.ts';
import { V1_SHARED_SCHEMAS } from '../../../../src/adapters/http/read/events-schemas.ts';
import {
  buildResponseSerializers,
  reachableSchemas,
} from '../../../../src/adapters/http/response-serializers.ts';
import { UserSchema } from '../../../../src/adapters/http/schemas.ts';
import { scraperCollectionSchemas } from '../../../../src/adapters/http/scrapers/scraper-collection-schemas.ts';
import { featureFlagSchemas } from '../../../../src/adapters/http/site/feature-flag-schemas.ts';
import { HealthReportSchema } from '../../../../src/adapters/http/site/health-schemas.ts';

// Each route's serializer is built with only the shared schemas its schema reaches through $ref
// (src/adapters/http/response-serializers.ts). What it generates must be what Fastify's own
// compiler, given every shared schema, generates.

type Schema = Record<string, unknown>;
const byId = (schemas: Schema[]) => Object.fromEntries(schemas.map((s) => [s.$id as string, s]));

t.test('the shared schemas a schema reaches, transitively; local refs name none', async (t) => {
  const shared = byId([
    { $id: 'A', type: 'object', properties: { b: { $ref: 'B#' } } },
    { $id: 'B', type: 'object', properties: { c: { $ref: 'C#/properties/x' } } },
    { $id: 'C', type: 'object', properties: { x: { type: 'string' } } },
    { $id: 'D', type: 'string' },
  ]);
  const route = { type: 'array', items: { $ref: 'A' }, definitions: { l: { $ref: '#/definitions/m' } } };
  t.same(Object.keys(reachableSchemas(route, shared) ?? {}).sort(), ['A', 'B', 'C']);
  t.same(reachableSchemas({ type: 'string' }, shared), {}, 'no ref: none');
  t.equal(reachableSchemas({ $ref: 'Nowhere#' }, shared), null, 'an unknown ref: null');
});

t.test('the app’s shared schemas: the same serializer code as with every shared schema', async (t) => {
  const all = [
    ErrorBody,
    HealthReportSchema,
    UserSchema,
    ...INGEST_SHARED_SCHEMAS,
    ...V1_SHARED_SCHEMAS,
    ...WIZARD_SCHEMAS,
    ...authSchemas,
    ...collectionSchemas,
    ...featureFlagSchemas,
    ...scraperCollectionSchemas,
  ] as Schema[];
  const shared = byId(all);
  t.ok(all.length >= 10, `${all.length} shared schemas`);
  // fast-json-stringify names an anonymous root schema by a process-wide counter.
  const code = (text: string) => text.replace(/__fjs_(root|merged)_\d+/g, '__fjs_$1');
  for (const schema of all) {
    const routes: unknown[] = [
      Type.Ref(schema.$id as string),
      Type.Object({ doc: Type.Ref(schema.$id as string), error: Type.Ref('ErrorBody') }),
    ];
    for (const route of routes) {
      const everything = fastJsonStringify(route as FjsSchema, {
        mode: 'standalone',
        schema: shared as unknown as Record<string, FjsSchema>,
      });
      const pruned = buildResponseSerializers(shared, { mode: 'standalone' })({ schema: route });
      t.equal(code(pruned as unknown as string), code(everything as unknown as string), `${schema.$id}`);
    }
  }
});

t.test('an unknown ref fails the build as it did', async (t) => {
  const shared = byId([ErrorBody as unknown as Schema]);
  const route = { type: 'object', properties: { x: { $ref: 'Missing#' } } };
  t.throws(() => buildResponseSerializers(shared)({ schema: route }), /Missing/);
});

t.test('in Fastify: a response through a shared schema, with what the schema omits dropped', async (t) => {
  const app = Fastify({
    schemaController: { compilersFactory: { buildSerializer: buildResponseSerializers } },
  });
  t.teardown(() => app.close());
  app.addSchema({ $id: 'Thing', type: 'object', properties: { name: { type: 'string' } } });
  app.addSchema({ $id: 'Unused', type: 'object', properties: { n: { type: 'integer' } } });
  app.get('/', { schema: { response: { 200: { $ref: 'Thing#' } } } }, async () => ({ name: 'x', secret: 1 }));
  const reply = await app.inject('/');
  t.equal(reply.body, '{"name":"x"}');
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { addExamples, exampleOf } from '../../../src/adapters/http/openapi-examples.ts';

// Issue 35 item 5: an example on every operation. docs/openapi.json (kept equal to the served document
// by test/integration/service/openapi.test.ts) has one on every request body and every 2xx answer
// body that is not bytes; `npm run lint:openapi` (redocly.yaml, no-invalid-media-type-examples)
// checks that each is valid against its schema.

const root = path.resolve(import.meta.dirname, '..', '..', '..');
type Media = { schema?: { type?: string; format?: string }; example?: unknown; examples?: unknown };
type Operation = {
  requestBody?: { content?: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};
const document = JSON.parse(readFileSync(path.join(root, 'docs', 'openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};

t.test('every body of every operation in docs/openapi.json has an example', async (t) => {
  let bodies = 0;
  for (const [url, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const contents = [
        ['request', operation.requestBody?.content],
        ...Object.entries(operation.responses)
          .filter(([status]) => status.startsWith('2'))
          .map(([status, response]) => [status, response.content] as const),
      ] as const;
      for (const [where, content] of contents) {
        for (const [type, media] of Object.entries(content ?? {})) {
          if (media.schema?.type === 'string' && media.schema.format === 'binary') continue;
          bodies += 1;
          t.ok(
            'example' in media || 'examples' in media,
            `${method.toUpperCase()} ${url} ${where} ${type}: has an example`,
          );
        }
      }
    }
  }
  t.ok(bodies > 100, `${bodies} bodies checked`);
});

t.test("a route's own example is kept; one is made from the schema otherwise", async (t) => {
  const own = { schema: { type: 'object' }, example: { mine: true } };
  const made = {
    schema: {
      type: 'object',
      required: ['id', 'slug', 'when'],
      properties: {
        id: { type: 'integer', minimum: 5 },
        slug: { type: 'string', pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' },
        when: { type: 'string', format: 'date-time' },
        kind: { type: 'string', enum: ['b', 'a'] },
        owner: { $ref: '#/components/schemas/Owner' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 2 },
        maybe: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
      },
    },
  };
  const tile = { schema: { type: 'string', format: 'binary' } };
  const operation = {
    requestBody: { content: { 'application/json': own } },
    responses: { 200: { content: { 'application/json': made } }, 204: {}, 400: { content: { 'x/y': {} } } },
  } as Record<string, unknown>;
  addExamples(operation, { Owner: { type: 'object', properties: { email: { type: 'string' } } } });
  t.same(own.example, { mine: true });
  t.same((made as Media).example, {
    id: 5,
    slug: 'city-events',
    when: '2024-05-01T10:00:00.000Z',
    kind: 'b',
    owner: { email: 'ada@example.org' },
    tags: ['example', 'example'],
    maybe: true,
  });
  addExamples({ responses: { 200: { content: { 'application/vnd.mapbox-vector-tile': tile } } } }, {});
  t.notOk('example' in tile, 'no example for bytes');
  t.equal(exampleOf({ type: 'string', pattern: '^[0-9a-f]{64}$' }, {}), 'a'.repeat(64));
  t.equal(exampleOf({ type: 'integer', maximum: 0 }, {}), 0);
});

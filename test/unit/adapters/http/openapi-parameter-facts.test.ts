import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import t from 'tap';
import { projectRoot } from '../../../../src/adapters/config/environment.ts';
import { parseHistogramPlan } from '../../../../src/domain/read/histogram.ts';
import { parseDateField, parseEventFilter, parseGroupBy } from '../../../../src/domain/read/read-query.ts';
import { parseEventSort } from '../../../../src/domain/read/sort.ts';

// The parameter facts docs/openapi.json states (enums and patterns the domain parser checks but
// Fastify does not, `x-documented` in the route schemas) say what the parser really accepts: a
// value the document allows is accepted, and a value it refuses is refused. The document is the
// committed one, which test/integration/service/openapi.test.ts keeps equal to the served one.

type Parameter = { name: string; schema?: { enum?: string[]; pattern?: string } };
const document = JSON.parse(readFileSync(path.join(projectRoot, 'docs', 'openapi.json'), 'utf8')) as {
  paths: Record<string, { get: { parameters: Parameter[] } }>;
};
const parameter = (url: string, name: string) => {
  const found = document.paths[url]?.get.parameters.find((p) => p.name === name)?.schema;
  if (!found) throw new Error(`${url} has no parameter ${name}`);
  return found;
};

const accepts = (parse: () => unknown): boolean => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

t.test('enums: every documented value is accepted, and nothing else', async (t) => {
  const groupBy = parameter('/api/v1/events/stats', 'groupBy').enum ?? [];
  const granularity = parameter('/api/v1/events/temporal', 'granularity').enum ?? [];
  t.same(groupBy, ['catalog', 'dataset']);
  t.same(granularity, ['day', 'week', 'month', 'auto']);
  for (const value of groupBy)
    t.ok(
      accepts(() => parseGroupBy(value)),
      `groupBy=${value}`,
    );
  for (const value of granularity)
    t.ok(
      accepts(() => parseHistogramPlan({ granularity: value })),
      value,
    );
  t.pass('no other value is accepted');
  fc.assert(
    fc.property(fc.string({ minLength: 1, maxLength: 12 }), (value) => {
      const trimmed = value.trim();
      if (trimmed === '') return true;
      return (
        accepts(() => parseGroupBy(value)) === groupBy.includes(trimmed) &&
        accepts(() => parseHistogramPlan({ granularity: value })) === granularity.includes(value)
      );
    }),
    { numRuns: 300, seed: 19 },
  );
});

t.test('patterns: sort, dateField and catalog match what the parser takes', async (t) => {
  const cases = [
    { pattern: parameter('/api/v1/events', 'sort').pattern, parse: (value: string) => parseEventSort(value) },
    {
      pattern: parameter('/api/v1/events', 'dateField').pattern,
      parse: (value: string) => parseDateField(value),
    },
    {
      pattern: parameter('/api/v1/events', 'catalog').pattern,
      parse: (value: string) => parseEventFilter({ catalog: value }),
    },
  ];
  // Values near the grammar: field names, data paths, slugs, with and without a sign.
  const piece = fc.constantFrom(
    'id',
    'title',
    'data',
    'eventTimestamp',
    'x',
    'a-b',
    '_',
    '9',
    'A',
    '',
    '.',
    '-',
  );
  const candidate = fc
    .array(fc.tuple(piece, fc.constantFrom('', '.', '-')), { minLength: 1, maxLength: 5 })
    .map((parts) => parts.map(([word, separator]) => word + separator).join(''));
  for (const { pattern, parse } of cases) {
    if (!pattern) throw new Error('a pattern is documented');
    const regex = new RegExp(pattern, 'u');
    fc.assert(
      fc.property(fc.oneof(candidate, fc.string({ minLength: 1, maxLength: 30 })), (value) => {
        if (value.trim() !== value || value === '') return true;
        return accepts(() => parse(value)) === regex.test(value);
      }),
      { numRuns: 1000, seed: 19 },
    );
    t.pass(`${pattern} agrees with the parser`);
  }
});

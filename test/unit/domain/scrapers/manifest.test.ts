import t from 'tap';
import { describeProblems, validateManifest } from '../../../../src/domain/scrapers/manifest.ts';
import { cronerSchedule } from '../../../../src/adapters/jobs/croner-schedule.ts';
import { parseManifestText } from '../../../../src/adapters/scrapers/yaml-manifest-source.ts';
import { ManifestUnreadableError } from '../../../../src/domain/scrapers/errors.ts';

const validate = (text: string) =>
  validateManifest(parseManifestText(text), (expression) => cronerSchedule.problem(expression));
const problemsOf = (text: string) => {
  const result = validate(text);
  if (result.ok) throw new Error('expected problems');
  return result.problems;
};

t.test('defaults: runtime python, output data.csv, timeout 300, memory 512, manual only', async (t) => {
  const result = validate('scrapers:\n  - name: Events\n    slug: events\n    entrypoint: main.py\n');
  t.same(result, {
    ok: true,
    scrapers: [
      {
        name: 'Events',
        slug: 'events',
        runtime: 'python',
        entrypoint: 'main.py',
        outputFile: 'data.csv',
        schedule: null,
        timeoutSecs: 300,
        memoryMb: 512,
      },
    ],
  });
});

t.test('the defaults block applies unless a scraper overrides it', async (t) => {
  const result = validate(`
defaults:
  runtime: node
  limits: { timeout: 60, memory: 256 }
scrapers:
  - { name: A, slug: a, entrypoint: a.js }
  - { name: B, slug: b, entrypoint: b.py, runtime: python, output: out.csv, schedule: "*/5 * * * *", limits: { timeout: 3600, memory: 4096 } }
  - { name: C, slug: c, entrypoint: c.js, limits: { memory: 64 } }
`);
  if (!result.ok) throw new Error(describeProblems(result.problems));
  t.same(
    result.scrapers.map((s) => [s.slug, s.runtime, s.outputFile, s.schedule, s.timeoutSecs, s.memoryMb]),
    [
      ['a', 'node', 'data.csv', null, 60, 256],
      ['b', 'python', 'out.csv', '*/5 * * * *', 3600, 4096],
      ['c', 'node', 'data.csv', null, 60, 64],
    ],
  );
});

t.test('every violation is reported with its path', async (t) => {
  const problems = problemsOf(`
defaults:
  runtime: ruby
  limits: { timeout: 5 }
scrapers:
  - { name: ok, slug: ok, entrypoint: main.py }
  - { slug: Bad_Slug, entrypoint: ../escape.py, runtime: perl }
  - { name: dup, slug: ok, entrypoint: /abs.py, limits: { timeout: 9, memory: 5000 }, schedule: "* * * * * *" }
  - { name: "${'x'.repeat(256)}", slug: "${'a'.repeat(129)}", entrypoint: m.py, schedule: "61 * * * *", limits: { timeout: 3601, memory: 63 } }
  - { name: float, slug: float, entrypoint: m.py, limits: { timeout: 30.5 }, extra: 1 }
  - { name: folder, slug: folder, entrypoint: m.py, output: out/data.csv }
  - { name: dots, slug: dots, entrypoint: m.py, output: ../data.csv }
`);
  const paths = problems.map((p) => p.path);
  t.same(paths, [
    'defaults.runtime',
    'defaults.limits.timeout',
    'scrapers[1].name',
    'scrapers[1].slug',
    'scrapers[1].runtime',
    'scrapers[1].entrypoint',
    'scrapers[2].slug',
    'scrapers[2].entrypoint',
    'scrapers[2].schedule',
    'scrapers[2].limits.timeout',
    'scrapers[2].limits.memory',
    'scrapers[3].name',
    'scrapers[3].slug',
    'scrapers[3].schedule',
    'scrapers[3].limits.timeout',
    'scrapers[3].limits.memory',
    'scrapers[4].extra',
    'scrapers[4].limits.timeout',
    'scrapers[5].output',
    'scrapers[6].output',
  ]);
  const byPath = new Map(problems.map((p) => [p.path, p.message]));
  t.match(byPath.get('scrapers[2].slug'), /already used by scrapers\[0\]/);
  t.match(byPath.get('scrapers[1].entrypoint'), /\.\./);
  t.match(byPath.get('scrapers[5].output'), /no folders/);
  t.match(byPath.get('scrapers[2].schedule'), /five-field/);
  t.match(byPath.get('scrapers[3].schedule'), /not a valid cron expression/);
  t.match(byPath.get('scrapers[2].limits.timeout'), /10 to 3600/);
  t.match(byPath.get('scrapers[3].limits.memory'), /64 to 4096/);
  t.match(byPath.get('scrapers[3].name'), /255/);
  t.match(byPath.get('scrapers[3].slug'), /128/);
  t.match(describeProblems(problems), /^defaults\.runtime: must be "python" or "node"\n/);
});

t.test('the boundaries of the limits are accepted', async (t) => {
  const result = validate(`
scrapers:
  - { name: lo, slug: lo, entrypoint: m.py, limits: { timeout: 10, memory: 64 } }
  - { name: "${'n'.repeat(255)}", slug: "${'s'.repeat(128)}", entrypoint: dir/m.py }
`);
  t.ok(result.ok);
});

t.test('the top level: scrapers required, a non-empty list, no unknown fields', async (t) => {
  t.same(problemsOf('defaults: { runtime: node }'), [{ path: 'scrapers', message: 'is required' }]);
  t.same(problemsOf('scrapers: []'), [{ path: 'scrapers', message: 'must declare at least one scraper' }]);
  t.same(
    problemsOf('scrapers: {}').map((p) => p.path),
    ['scrapers'],
  );
  t.same(
    problemsOf('- a\n- b').map((p) => p.path),
    ['(root)'],
  );
  t.same(
    problemsOf('scrapers: [ { name: a, slug: a, entrypoint: a.py } ]\nversion: 2').map((p) => p.path),
    ['version'],
  );
  t.same(problemsOf('scrapers: [ 3 ]'), [{ path: 'scrapers[0]', message: 'must be a mapping' }]);
});

t.test('YAML syntax errors and aliases are unreadable manifests, with a line number', async (t) => {
  t.throws(() => parseManifestText('scrapers:\n  - name: [unclosed\n'), ManifestUnreadableError);
  t.throws(() => parseManifestText('scrapers:\n  - name: a\n  name: b\n  - x'), /line \d+/);
  t.throws(() => parseManifestText('a: &x [1]\nb: *x\n'), ManifestUnreadableError);
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    t.throws(() => parseManifestText(`scrapers:\n  - name: a\n    ${key}:\n      polluted: yes\n`), {
      message: new RegExp(`the key "${key}" is not allowed`),
    });
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
});

// Unit tests of the Node helper; the CSV cases are shared with the Python helper's tests.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { Output, output } from '@chronomap/scraper';

const vectors: Array<{ name: string; rows: Record<string, unknown>[]; csv: string }> = JSON.parse(
  readFileSync(new URL('../../csv-test-vectors.json', import.meta.url), 'utf8'),
);

const quiet = <T>(fn: () => T): T => {
  const write = process.stderr.write;
  process.stderr.write = () => true;
  try {
    return fn();
  } finally {
    process.stderr.write = write;
  }
};

t.test('shared vectors: the same CSV as the Python helper', async (t) => {
  for (const v of vectors) {
    const out = new Output();
    quiet(() => out.writeRows(v.rows));
    t.equal(out.toCsvString(), v.csv, v.name);
  }
});

t.test('require() and import give the same object', async (t) => {
  const require = createRequire(import.meta.url);
  t.equal(require('../src/index.cjs').output, output);
});

t.test('rowCount, and extra keys warn once per key', async (t) => {
  const out = new Output();
  const warnings: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string) => warnings.push(chunk) > 0) as typeof process.stderr.write;
  try {
    out.writeRow({ a: 1 });
    out.writeRows([
      { a: 2, b: 3 },
      { a: 4, b: 5 },
    ]);
  } finally {
    process.stderr.write = write;
  }
  t.equal(out.rowCount, 3);
  t.equal(warnings.length, 1);
  t.match(warnings[0], /'b'/);
});

t.test('rejects non-object rows and an empty first row', async (t) => {
  t.throws(() => new Output().writeRow([1, 2] as unknown as Record<string, unknown>), TypeError);
  t.throws(() => new Output().writeRow({}), /first row/);
});

t.test('dates are ISO 8601', async (t) => {
  const out = new Output();
  out.writeRow({ at: new Date(Date.UTC(2026, 4, 1)) });
  t.equal(out.toCsvString(), 'at\r\n2026-05-01T00:00:00.000Z\r\n');
});

t.test('save writes only when called, to the runner variables or data.csv, filename overrides', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chronomap-helper-'));
  const saved = { ...process.env };
  t.teardown(() => {
    process.env = saved;
  });
  const out = new Output();
  out.writeRow({ title: 'x' });
  t.same(readdirSync(dir), []);
  process.env.CHRONOMAP_OUTPUT_DIR = dir;
  process.env.CHRONOMAP_OUTPUT_FILE = 'events.csv';
  t.equal(out.save(), join(dir, 'events.csv'));
  t.equal(readFileSync(join(dir, 'events.csv'), 'utf8'), 'title\r\nx\r\n');
  delete process.env.CHRONOMAP_OUTPUT_FILE;
  t.equal(out.save(), join(dir, 'data.csv'));
  t.equal(out.save('other.csv'), join(dir, 'other.csv'));
  t.same(readdirSync(dir).sort(), ['data.csv', 'events.csv', 'other.csv']);
});

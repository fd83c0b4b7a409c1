import t from 'tap';
import { previewIngestSchema } from '../../../../src/application/ingest/preview-ingest-schema.ts';
import type { SourceFiles } from '../../../../src/ports/ingest/source-files.ts';
import { memorySourceFiles } from '../../../fakes/ingest/source-files.ts';

// The preview's time budget: a sheet still being read when the budget ends says so in `problem`
// instead of holding the request (a source whose rows never end); within the budget it samples
// its 1,000 rows of a longer file.

const endless: SourceFiles = {
  async *rows() {
    yield ['time', 'title'];
    for (let i = 0; ; i++) {
      yield ['2024-01-01T00:00:00Z', `row ${i}`];
      await new Promise((resolve) => setImmediate(resolve));
    }
  },
  sheets: async () => [null],
};

const rows = Array.from({ length: 1500 }, (_, i) => ['2024-01-01T00:00:00Z', `row ${i}`]);
const longFile = memorySourceFiles({ 'x.csv': [{ name: null, rows: [['time', 'title'], ...rows] }] });

t.test('a sheet past the time budget ends with a problem, not a held request', async (t) => {
  const budget = new AbortController();
  budget.abort();
  const [sheet] = await previewIngestSchema(
    { files: endless },
    { storedPath: 'x.csv', format: 'csv' },
    [null],
    {},
    budget.signal,
  );
  t.match(sheet, { rowsSampled: 0, problem: 'the preview ran out of its time budget' });
});

t.test('within the budget the preview samples its 1,000 rows', async (t) => {
  const [sheet] = await previewIngestSchema(
    { files: longFile },
    { storedPath: 'x.csv', format: 'csv' },
    [null],
    {},
    new AbortController().signal,
  );
  t.match(sheet, { rowsSampled: 1000 });
  t.notOk(sheet && 'problem' in sheet && sheet.problem);
});

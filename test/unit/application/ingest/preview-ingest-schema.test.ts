import t from 'tap';
import { previewIngestSchema } from '../../../../src/application/ingest/preview-ingest-schema.ts';
import { memorySourceFiles } from '../../../fakes/ingest/source-files.ts';

// The preview's time budget: a sheet still being read when the budget ends says so in `problem`
// instead of holding the request (a file with more rows than the preview samples).

const rows = Array.from({ length: 1500 }, (_, i) => ['2024-01-01T00:00:00Z', `row ${i}`]);
const longFile = memorySourceFiles({ 'x.csv': [{ name: null, rows: [['time', 'title'], ...rows] }] });

t.test('a sheet past the time budget ends with a problem, not a held request', async (t) => {
  const budget = new AbortController();
  budget.abort();
  const [sheet] = await previewIngestSchema(
    { files: longFile },
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

import t from 'tap';
import {
  countEvents,
  ingestApp,
  type UploadedDoc,
  upload,
  waitForFile,
} from '../../fixtures/ingest/client.ts';
import { ods, type Sheet, xlsx } from '../../fixtures/ingest/workbooks.ts';

// Multi-sheet workbooks: one ingest job per sheet, each into its own dataset; one failing sheet
// (here a zip bomb) is FAILED while the others complete, and the file is partial.

const SHEETS: Sheet[] = [
  {
    name: 'Quakes',
    rows: [
      ['time', 'latitude', 'longitude', 'title'],
      [{ date: 46108.5 }, 52.5, 13.4, 'a'],
      [{ date: 46109.25 }, 48.8, 2.3, 'b'],
    ],
  },
  {
    name: 'Festivals',
    rows: [
      ['date', 'place', 'name'],
      [{ dateIso: '2026-06-01T18:00:00Z' }, 'Berlin', 'Fête'],
      [{ dateIso: '2026-07-01T18:00:00Z' }, 'Paris', 'Fest'],
      [{ dateIso: '2026-08-01T18:00:00Z' }, 'Köln', 'Fiesta'],
    ],
  },
];

for (const [format, build] of [
  ['xlsx', () => xlsx(SHEETS)],
  ['ods', () => ods(SHEETS)],
] as const) {
  t.test(`a ${format} workbook with two sheets makes two jobs and two datasets`, async (t) => {
    const { app, db, catalogId } = await ingestApp(t);
    const response = await upload(app, catalogId, { name: `book.${format}`, content: build() });
    t.equal(response.statusCode, 201, response.body);
    const doc = (response.json() as { doc: UploadedDoc }).doc;
    const jobs = doc.jobs as unknown as { sheetName: string }[];
    t.same(
      jobs.map((job) => job.sheetName),
      ['Quakes', 'Festivals'],
    );
    const progress = await waitForFile(app, doc.id);
    t.equal(progress.status, 'completed', JSON.stringify(progress.errorLog));
    t.equal(progress.datasetsCount, 2);
    t.same(
      progress.jobs.map((job) => job.results?.created),
      [2, 3],
    );
    t.equal(progress.jobs[1]?.results?.geocoded, 3, 'the second sheet was geocoded offline');
    t.equal(await countEvents(db.pool, doc.datasets[0] as number), 2);
    t.equal(await countEvents(db.pool, doc.datasets[1] as number), 3);
  });
}

t.test('a zip bomb sheet fails on its own; the other sheet completes', async (t) => {
  const { app, db, catalogId } = await ingestApp(t);
  const response = await upload(app, catalogId, {
    name: 'bomb.xlsx',
    content: xlsx(SHEETS, { bombSheet: 0 }),
  });
  t.equal(response.statusCode, 201, response.body);
  const doc = (response.json() as { doc: UploadedDoc }).doc;
  const progress = await waitForFile(app, doc.id);
  t.equal(progress.status, 'partial');
  t.same(
    progress.jobs.map((job) => job.currentStage),
    ['failed', 'completed'],
  );
  t.match(progress.errorLog, [/^Quakes: the workbook looks like a zip bomb/]);
  t.equal(await countEvents(db.pool, doc.datasets[0] as number), 0, 'nothing half-written');
  t.equal(await countEvents(db.pool, doc.datasets[1] as number), 3);
});

t.test('a file named .xlsx that is not a workbook is refused at upload', async (t) => {
  const { app, catalogId } = await ingestApp(t);
  const response = await upload(app, catalogId, { name: 'fake.xlsx', content: 'time,title\n2026-01-01,a\n' });
  t.equal(response.statusCode, 400);
  t.match(response.json(), { message: /not a ZIP archive/, code: 'INVALID_FORMAT' });
});

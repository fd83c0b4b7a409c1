import t from 'tap';
import type { SourceRow } from '../../../../src/domain/ingest/rows.ts';
import { memorySourceFiles } from '../../../fakes/ingest/source-files.ts';
import { runCreateEvents } from '../../../helpers/create-events-run.ts';

// Issue 30 §7, bounded worker memory per import: create-events stores a batch when it holds
// `batchSize` rows or `batchBytes` of cell text, whichever comes first, so a file of large cells is
// stored in many small batches instead of one that holds the whole file; every row is stored once,
// in order, and the stage's high-water mark moves with each batch.

const CELL = 'x'.repeat(60_000); // about 120 kB as a JavaScript string (a cell holds at most 65,536)

function rows(count: number, cell: string): SourceRow[] {
  const header = ['id', 'time', 'latitude', 'longitude', 'text'];
  const data = Array.from({ length: count }, (_, i) => [
    String(i + 1),
    `2026-01-${String((i % 28) + 1).padStart(2, '0')}T00:00:00Z`,
    '52.5',
    '13.4',
    cell,
  ]);
  return [header, ...data];
}

type Stored = { events: number; rowsBefore: number; rowsProcessed: number };

async function run(source: SourceRow[], options: { batchSize: number; batchBytes?: number }) {
  const files = memorySourceFiles({ 'a.csv': [{ name: null, rows: source }] });
  const batches: Stored[] = [];
  const result = await runCreateEvents(files, 'a.csv', options, (batch) =>
    batches.push({
      events: batch.events.length,
      rowsBefore: batch.rowsBefore,
      rowsProcessed: batch.rowsProcessed,
    }),
  );
  return { batches, output: result.output };
}

t.test('a file of large cells is stored in batches bounded by bytes, not only by rows', async (t) => {
  const { batches, output } = await run(rows(40, CELL), { batchSize: 1000, batchBytes: 1024 * 1024 });
  t.equal(output.created, 40, 'every row stored');
  t.ok(batches.length >= 5, `${batches.length} batches, not one of 40 large rows`);
  t.ok(
    batches.every((batch) => batch.events <= 9),
    'none holds more than about a megabyte of cells',
  );
  t.same(
    batches.map((batch) => batch.rowsBefore),
    [0, ...batches.slice(0, -1).map((batch) => batch.rowsProcessed)],
    'each batch continues where the one before ended',
  );
  t.equal(batches.at(-1)?.rowsProcessed, 40);
});

t.test('small cells: the row bound decides, as before', async (t) => {
  const { batches, output } = await run(rows(40, 'small'), { batchSize: 7 });
  t.equal(output.created, 40);
  t.same(
    batches.map((batch) => batch.rowsProcessed),
    [7, 14, 21, 28, 35, 40],
  );
  const large = await run(rows(12, CELL), { batchSize: 1000 });
  t.same(
    large.batches.map((batch) => batch.events),
    [12],
    'the default byte bound (16 MB) is far above 12 rows of 120 kB',
  );
});

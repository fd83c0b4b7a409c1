import type { Test } from 'tap';
import { IngestFailure } from '../../../src/domain/ingest/failures.ts';
import type { FileFormat } from '../../../src/domain/ingest/imports.ts';
import type { SourceRow } from '../../../src/domain/ingest/rows.ts';
import type { SourceFiles } from '../../../src/ports/ingest/source-files.ts';
import type { MemorySheet } from '../../fakes/ingest/source-files.ts';

// What every implementation of the SourceFiles port does, as one suite: run against the in-memory
// fake (test/unit/fakes/ingest/source-files.test.ts) and against localSourceFiles over real files
// (test/unit/adapters/files/source-files-contract.test.ts). The stages rely on these: the header
// comes first, a row that cannot be read is reported and reading goes on, a file can be read again,
// and a file that is gone fails permanently (no retry brings it back).

type StoredFile = { storedPath: string; format: FileFormat };

/** A fresh port, and a way to store a file whose sheets read as the rows given. */
export type MakeSourceFiles = () => Promise<{
  files: SourceFiles;
  /**
   * Stores the file. A malformed row is only given in a CSV, and the rows after it hold no quote
   * (the local harness writes it as a quote that is never closed).
   */
  put(file: StoredFile, sheets: MemorySheet[]): Promise<void>;
}>;

async function read(files: SourceFiles, file: StoredFile, sheetIndex = 0): Promise<SourceRow[]> {
  const rows: SourceRow[] = [];
  for await (const row of files.rows(file, sheetIndex)) rows.push(row);
  return rows;
}

/** A malformed row's reason is the reader's own words: what counts is that there is one. */
const shapes = (rows: SourceRow[]) =>
  rows.map((row) => (Array.isArray(row) ? row : { malformed: row.malformed.length > 0 }));

/** Rejects with the domain's permanent failure (an IngestFailure classified permanent). */
async function failsPermanently(t: Test, work: Promise<unknown>, what: string): Promise<void> {
  const error = await work.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  t.ok(error instanceof IngestFailure && error.classification === 'permanent', what);
}

const CSV_ROWS = [
  ['id', 'time', 'title'],
  ['1', '2026-01-01T00:00:00Z', 'Köln, centre'],
  ['2', '2026-01-02T00:00:00Z', 'a "quoted" word'],
  ['3', '2026-01-03T00:00:00Z', 'two\nlines'],
];

const WORKBOOK: MemorySheet[] = [
  {
    name: 'Quakes',
    rows: [
      ['time', 'place'],
      ['2026-01-01T00:00:00Z', 'Köln'],
    ],
  },
  {
    name: 'Second sheet',
    rows: [
      ['id', 'title'],
      ['7', 'b'],
      ['8', 'c'],
    ],
  },
];

export function sourceFilesContract(t: Test, make: MakeSourceFiles): void {
  t.test('a CSV: one unnamed sheet, the header first, then each record as strings', async (t) => {
    const { files, put } = await make();
    const file = { storedPath: 'uploads/a.csv', format: 'csv' as const };
    await put(file, [{ name: null, rows: CSV_ROWS }]);
    t.same(await files.sheets(file), [null]);
    t.same(await read(files, file), CSV_ROWS);
    t.same(await read(files, file), CSV_ROWS, 'a second pass reads the same rows');
  });

  t.test('a row that cannot be read says why, and the rows after it are still read', async (t) => {
    const { files, put } = await make();
    const file = { storedPath: 'broken.csv', format: 'csv' as const };
    const rows: SourceRow[] = [
      ['id', 'title'],
      ['1', 'a'],
      { malformed: 'a quoted field is never closed' },
      ['3', 'c'],
    ];
    await put(file, [{ name: null, rows }]);
    t.same(shapes(await read(files, file)), [['id', 'title'], ['1', 'a'], { malformed: true }, ['3', 'c']]);
  });

  for (const format of ['xlsx', 'ods'] as const) {
    t.test(`a workbook (${format}): its sheet names in order, each sheet's rows by index`, async (t) => {
      const { files, put } = await make();
      const file = { storedPath: `book.${format}`, format };
      await put(file, WORKBOOK);
      t.same(await files.sheets(file), ['Quakes', 'Second sheet']);
      t.same(await read(files, file, 1), WORKBOOK[1]?.rows);
      t.same(await read(files, file, 0), WORKBOOK[0]?.rows);
    });
  }

  t.test('a file that is not stored fails permanently', async (t) => {
    const { files } = await make();
    for (const format of ['csv', 'xlsx', 'ods'] as const) {
      const file = { storedPath: `gone.${format}`, format };
      await failsPermanently(t, read(files, file), `the rows of a ${format}`);
      if (format !== 'csv') await failsPermanently(t, files.sheets(file), `the sheets of a ${format}`);
    }
  });
}

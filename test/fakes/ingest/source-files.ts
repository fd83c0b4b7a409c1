import { permanent } from '../../../src/domain/ingest/failures.ts';
import type { SourceRow } from '../../../src/domain/ingest/rows.ts';
import type { SourceFiles } from '../../../src/ports/ingest/source-files.ts';

/** One sheet of a stored file: a CSV has one, unnamed; a workbook's have names. */
export type MemorySheet = { name: string | null; rows: SourceRow[] };

/**
 * The SourceFiles port in memory: the rows of each sheet of each stored path, as the test gives
 * them (the header first, then rows of strings or `{ malformed }`). Like localSourceFiles a CSV has
 * one unnamed sheet whatever is stored, a workbook its sheets' names, and reading a file that is not
 * stored fails permanently; both pass test/contracts/ingest/source-files.ts. `reads(path)` counts
 * the passes over a file's rows (what the stages' tests count).
 */
export function memorySourceFiles(stored: Record<string, MemorySheet[]> = {}): SourceFiles & {
  put(storedPath: string, sheets: MemorySheet[]): void;
  reads(storedPath: string): number;
} {
  const files = new Map(Object.entries(stored));
  const passes = new Map<string, number>();
  const sheetsOf = (storedPath: string, format: string) => {
    const sheets = files.get(storedPath);
    if (sheets) return sheets;
    throw format === 'csv'
      ? permanent('ENOENT', 'the uploaded file is no longer stored')
      : permanent('INVALID_FORMAT', `the workbook is damaged (${storedPath} is not stored)`);
  };
  return {
    put(storedPath, sheets) {
      files.set(storedPath, structuredClone(sheets));
    },
    reads: (storedPath) => passes.get(storedPath) ?? 0,
    async *rows(file, sheetIndex) {
      passes.set(file.storedPath, (passes.get(file.storedPath) ?? 0) + 1);
      const sheets = sheetsOf(file.storedPath, file.format);
      // The CSV reader has no sheets to choose from; an XLSX without the sheet refuses the file.
      const sheet = file.format === 'csv' ? sheets[0] : sheets[sheetIndex];
      if (!sheet && file.format === 'xlsx')
        throw permanent('INVALID_FORMAT', `the workbook has no sheet ${sheetIndex + 1}`);
      for (const row of sheet?.rows ?? []) yield structuredClone(row);
    },
    async sheets(file) {
      if (file.format === 'csv') return [null];
      return sheetsOf(file.storedPath, file.format).map((sheet) => sheet.name);
    },
  };
}

import type { SourceRow } from '../../domain/ingest/rows.ts';
import type { FileFormat } from '../../domain/ingest/imports.ts';

/**
 * The file rows of one sheet: the header first, then each record as strings (or why it cannot be
 * read). Reading only: FileStore writes and removes the files.
 */
export interface SourceFiles {
  rows(file: { storedPath: string; format: FileFormat }, sheetIndex: number): AsyncIterable<SourceRow>;
  /** Sheet names of a workbook (one job each); a CSV has one unnamed sheet. */
  sheets(file: { storedPath: string; format: FileFormat }): Promise<(string | null)[]>;
}

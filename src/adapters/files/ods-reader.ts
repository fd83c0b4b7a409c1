import { permanent } from '../../domain/ingest/failures.ts';
import { MAX_COLUMNS } from './limits.ts';
import { collectXml, parseXml } from './xml-stream.ts';
import type { ZipArchive } from './zip-reader.ts';

// ODS (OpenDocument): the tables of content.xml, and the rows of one as strings like a CSV's. Dates
// come from office:date-value (taken as UTC when it has no zone), numbers from office:value. The
// content is streamed; repeated rows and cells (office suites write "16,000 empty cells" and "a
// million empty rows" at the end of a sheet) are expanded only where content follows.

const MAX_REPEATED_ROWS = 1_000_000;
const MAX_SPACES = 1_000;

async function content(archive: ZipArchive): Promise<AsyncGenerator<string>> {
  const chunks = await archive.textChunks('content.xml');
  if (!chunks) throw permanent('INVALID_FORMAT', 'the file is not an ODS workbook (no content.xml)');
  return chunks;
}

export async function odsSheetNames(archive: ZipArchive): Promise<string[]> {
  let depth = 0; // tables nested in cells are not sheets
  return collectXml<string>(await content(archive), 'content.xml', (emit) => ({
    open({ name, attributes }) {
      if (name !== 'table:table') return;
      if (depth === 0) emit(attributes['table:name'] ?? 'Sheet');
      depth++;
    },
    close(name) {
      if (name === 'table:table') depth--;
    },
  }));
}

type Cell = { attributes: Record<string, string>; paragraphs: string[]; inParagraph: boolean };

function cellValue({ attributes, paragraphs }: Cell): string {
  const type = attributes['office:value-type'];
  if (type === 'date') {
    const value = attributes['office:date-value'] ?? '';
    return /^\d{4}-\d{2}-\d{2}T/.test(value) && !/[Z+]/.test(value) ? `${value}Z` : value;
  }
  if (type === 'float' || type === 'percentage' || type === 'currency')
    return attributes['office:value'] ?? '';
  if (type === 'boolean') return attributes['office:boolean-value'] ?? '';
  return paragraphs.join('\n');
}

const repeated = (value: string | undefined) => Number(value ?? 1);

type Rows = { row: string[]; times: number };

export async function* odsRows(archive: ZipArchive, sheetIndex: number): AsyncGenerator<string[]> {
  let depth = 0;
  let tables = 0;
  let active = false;
  let found = false;
  let row: string[] | null = null;
  let rowRepeat = 1;
  let cell: Cell | null = null;
  let annotation = 0; // comments attached to a cell are not its text
  let pendingEmpty = 0;
  let emptyCells = 0; // empty cells since the last cell with content, not yet in the row
  const parts = parseXml<Rows>(await content(archive), 'content.xml', (emit, done) => ({
    open({ name, attributes }) {
      if (name === 'table:table') {
        depth++;
        if (depth === 1) {
          active = tables === sheetIndex;
          found ||= active;
          tables++;
        }
      }
      if (!active || depth !== 1) return;
      if (name === 'table:table-row') {
        row = [];
        emptyCells = 0;
        rowRepeat = Math.min(repeated(attributes['table:number-rows-repeated']), MAX_REPEATED_ROWS);
      } else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && row) {
        cell = { attributes, paragraphs: [], inParagraph: false };
      } else if (name === 'office:annotation') annotation++;
      else if (!cell || annotation > 0) return;
      else if (name === 'text:p') {
        cell.paragraphs.push('');
        cell.inParagraph = true;
      } else if (cell.inParagraph && name === 'text:s') {
        const spaces = Math.max(1, Math.min(repeated(attributes['text:c']) || 1, MAX_SPACES));
        cell.paragraphs[cell.paragraphs.length - 1] += ' '.repeat(spaces);
      } else if (cell.inParagraph && name === 'text:tab') cell.paragraphs[cell.paragraphs.length - 1] += '\t';
    },
    text(text) {
      if (cell?.inParagraph && annotation === 0) cell.paragraphs[cell.paragraphs.length - 1] += text;
    },
    close(name) {
      if (name === 'table:table') {
        depth--;
        if (depth === 0 && active) {
          active = false;
          done(); // the sheet is read; the rest of the document is other sheets
        }
        return;
      }
      if (!active || depth !== 1) return;
      if (name === 'office:annotation') annotation--;
      else if (name === 'text:p' && cell && annotation === 0) cell.inParagraph = false;
      else if ((name === 'table:table-cell' || name === 'table:covered-table-cell') && cell && row) {
        const value = cellValue(cell);
        const repeat = repeated(cell.attributes['table:number-columns-repeated']);
        if (value === '') {
          // Trailing empty cells are often "repeated 16,000 times": counted, and only written out
          // when a cell with content follows them.
          emptyCells = Math.min(emptyCells + Math.max(0, repeat || 0), MAX_COLUMNS + 1);
        } else {
          if (row.length + emptyCells + repeat > MAX_COLUMNS) {
            throw permanent('TOO_MANY_COLUMNS', `the sheet has more than ${MAX_COLUMNS} columns`);
          }
          for (; emptyCells > 0; emptyCells--) row.push('');
          for (let i = 0; i < repeat; i++) row.push(value);
        }
        cell = null;
      } else if (name === 'table:table-row' && row) {
        emptyCells = 0;
        while (row.length > 0 && row[row.length - 1] === '') row.pop();
        if (row.length === 0) {
          // Empty rows (often repeated a million times at the end) are kept only when more data follows.
          pendingEmpty += rowRepeat;
        } else {
          if (pendingEmpty > 0) emit({ row: [''], times: pendingEmpty });
          pendingEmpty = 0;
          emit({ row, times: rowRepeat });
        }
        row = null;
      }
    },
  }));
  for await (const { row: each, times } of parts) {
    for (let i = 0; i < times; i++) yield each;
  }
  if (!found) throw permanent('INVALID_FORMAT', `the workbook has no sheet ${sheetIndex + 1}`);
}

import { permanent } from '../../domain/ingest/failures.ts';
import { MAX_COLUMNS } from './limits.ts';
import { collectXml, parseXml, type XmlOptions } from './xml-stream.ts';
import type { ZipArchive } from './zip-reader.ts';

// XLSX (Office Open XML): the sheets listed in xl/workbook.xml, and the rows of one sheet as strings
// like a CSV's. Shared strings and styles are read first (they are small next to the sheet); the
// sheet itself is streamed. Numbers in a date style (XLSX stores serial day numbers) come out as
// ISO 8601.

const LOCAL_NAMES: XmlOptions = { localNames: true };

export async function xlsxSheets(archive: ZipArchive): Promise<{ name: string; path: string }[]> {
  const workbook = await archive.textChunks('xl/workbook.xml');
  const rels = await archive.textChunks('xl/_rels/workbook.xml.rels');
  if (!workbook || !rels)
    throw permanent('INVALID_FORMAT', 'the file is not an XLSX workbook (no xl/workbook.xml)');
  const targets = new Map<string, string>();
  await collectXml<never>(
    rels,
    'xl/_rels/workbook.xml.rels',
    () => ({
      open({ name, attributes }) {
        const id = attributes.Id;
        const target = attributes.Target;
        if (name === 'Relationship' && id && target)
          targets.set(id, target.startsWith('/') ? target.slice(1) : `xl/${target}`);
      },
    }),
    LOCAL_NAMES,
  );
  return collectXml<{ name: string; path: string }>(
    workbook,
    'xl/workbook.xml',
    (emit) => ({
      open({ name, attributes }) {
        if (name !== 'sheet') return;
        // The relationship id is r:id, whatever prefix the writer bound to the relationships namespace.
        const idAttribute = Object.keys(attributes).find((key) => key.endsWith(':id'));
        emit({
          name: attributes.name ?? 'Sheet',
          path: targets.get(idAttribute ? (attributes[idAttribute] ?? '') : '') ?? '',
        });
      },
    }),
    LOCAL_NAMES,
  );
}

async function sharedStrings(archive: ZipArchive): Promise<string[]> {
  let current = '';
  let inText = false;
  let phonetic = 0;
  const xml = await archive.textChunks('xl/sharedStrings.xml');
  if (!xml) return [];
  return collectXml<string>(
    xml,
    'sharedStrings',
    (emit) => ({
      open({ name }) {
        if (name === 'si') current = '';
        else if (name === 'rPh')
          phonetic++; // reading aids for East Asian text, not the cell's text
        else if (name === 't') inText = true;
      },
      text(text) {
        if (inText && phonetic === 0) current += text;
      },
      close(name) {
        if (name === 't') inText = false;
        else if (name === 'rPh') phonetic--;
        else if (name === 'si') emit(current);
      },
    }),
    LOCAL_NAMES,
  );
}

const BUILT_IN_DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

/** Which cell styles (index into cellXfs) format numbers as dates. */
async function dateStyles(archive: ZipArchive): Promise<Set<number>> {
  const custom = new Set<number>();
  let inCellXfs = false;
  const xml = await archive.textChunks('xl/styles.xml');
  if (!xml) return new Set();
  const formats = await collectXml<number>(
    xml,
    'styles',
    (emit) => ({
      open({ name, attributes }) {
        if (name === 'numFmt') {
          const code = (attributes.formatCode ?? '').replace(/"[^"]*"|\[[^\]]*\]/g, '');
          if (/[dmyh]/i.test(code)) custom.add(Number(attributes.numFmtId));
        } else if (name === 'cellXfs') inCellXfs = true;
        else if (name === 'xf' && inCellXfs) emit(Number(attributes.numFmtId ?? 0));
      },
      close(name) {
        if (name === 'cellXfs') inCellXfs = false;
      },
    }),
    LOCAL_NAMES,
  );
  const dates = new Set<number>();
  formats.forEach((id, index) => {
    if (BUILT_IN_DATE_FORMATS.has(id) || custom.has(id)) dates.add(index);
  });
  return dates;
}

/** A1-style reference to a column index (A → 0), or -1 when it has no letters. */
function columnIndex(reference: string): number {
  let index = 0;
  for (const char of reference.replace(/\d+$/, '').toUpperCase()) {
    const digit = char.charCodeAt(0) - 64;
    if (digit < 1 || digit > 26) return -1;
    index = index * 26 + digit;
    if (index > MAX_COLUMNS) break; // already too wide; no need to count on
  }
  return index - 1;
}

/** Excel's serial day number (1900 system) as ISO 8601 UTC. */
export function excelSerialToIso(serial: number): string {
  return new Date(Math.round((serial - 25569) * 86_400_000)).toISOString();
}

type Cell = {
  index: number;
  type: string | undefined;
  style: number;
  raw: string | undefined;
  inline: string;
};

function cellValue(cell: Cell, strings: string[], dates: Set<number>): string {
  if (cell.type === 's') return strings[Number(cell.raw)] ?? '';
  if (cell.type === 'inlineStr') return cell.inline;
  if (cell.raw === undefined) return '';
  if (cell.type === 'b') return cell.raw === '1' ? 'true' : 'false';
  if (cell.type !== 'str' && cell.type !== 'e' && dates.has(cell.style) && cell.raw !== '')
    return excelSerialToIso(Number(cell.raw));
  return cell.raw;
}

export async function* xlsxRows(archive: ZipArchive, sheetPath: string): AsyncGenerator<string[]> {
  const strings = await sharedStrings(archive);
  const dates = await dateStyles(archive);
  const sheet = await archive.textChunks(sheetPath);
  if (!sheet) throw permanent('INVALID_FORMAT', `the workbook has no ${sheetPath}`);
  let row: string[] | null = null;
  let next = 0;
  let cell: Cell | null = null;
  let into: 'value' | 'inline' | null = null;
  yield* parseXml<string[]>(
    sheet,
    sheetPath,
    (emit) => ({
      open({ name, attributes }) {
        if (name === 'row') {
          row = [];
          next = 0;
        } else if (name === 'c' && row) {
          const referenced = attributes.r ? columnIndex(attributes.r) : -1;
          const index = referenced >= 0 ? referenced : next;
          if (index >= MAX_COLUMNS) {
            throw permanent('TOO_MANY_COLUMNS', `the sheet has more than ${MAX_COLUMNS} columns`);
          }
          next = index + 1;
          cell = { index, type: attributes.t, style: Number(attributes.s ?? -1), raw: undefined, inline: '' };
        } else if (name === 'v' && cell) {
          cell.raw = '';
          into = 'value';
        } else if (name === 't' && cell) into = 'inline';
      },
      text(text) {
        if (!cell) return;
        if (into === 'value') cell.raw += text;
        else if (into === 'inline') cell.inline += text;
      },
      close(name) {
        if (name === 'v' || name === 't') into = null;
        else if (name === 'c' && cell && row) {
          while (row.length < cell.index) row.push('');
          row[cell.index] = cellValue(cell, strings, dates);
          cell = null;
        } else if (name === 'row' && row) {
          emit(row);
          row = null;
        }
      },
    }),
    LOCAL_NAMES,
  );
}

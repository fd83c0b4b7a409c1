import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { permanent } from '../../domain/ingest/failures.ts';
import type { SourceRow } from '../../domain/ingest/rows.ts';
import type { SourceFiles } from '../../ports/ingest/source-files.ts';
import { CsvParser, detectDelimiter } from '@chronomap/csv';
import { CsvDecoder, type DecodedChunk, mixedEncoding } from './csv-encoding.ts';
import { MAX_COLUMNS } from './limits.ts';
import { workbookRows, workbookSheetNames } from './workbook-reader.ts';

export { MAX_COLUMNS };

// Uploaded files live under <dataDir>/ingest; stored paths are relative to it so that the data
// directory can move.

const HEAD_BYTES = 64 * 1024;

type CsvSniff = { encoding: 'utf-8' | 'latin1'; bomBytes: number; delimiter: string };

/** Encoding (UTF-8 with or without BOM, else Latin-1), delimiter, and a refusal of binary files. */
export function sniffCsv(head: Buffer): CsvSniff {
  if (head.length === 0) throw permanent('INVALID_FORMAT', 'the file is empty');
  if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
    throw permanent('INVALID_FORMAT', 'the file is UTF-16 encoded; save it as UTF-8 CSV');
  }
  if (head[0] === 0x50 && head[1] === 0x4b && head[2] === 0x03 && head[3] === 0x04) {
    throw permanent('INVALID_FORMAT', 'the file is a ZIP archive (a workbook?), not CSV text');
  }
  let controls = 0;
  for (const byte of head) {
    if (byte === 0)
      throw permanent('INVALID_FORMAT', 'the file is binary, not CSV text (it contains NUL bytes)');
    if (byte < 9 || (byte > 13 && byte < 32)) controls++;
  }
  if (controls > head.length / 100) throw permanent('INVALID_FORMAT', 'the file is binary, not CSV text');
  const bomBytes = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  let encoding: CsvSniff['encoding'] = 'utf-8';
  let text: string;
  try {
    // stream: true tolerates a character cut at the end of the head.
    text = new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(bomBytes), { stream: true });
  } catch {
    encoding = 'latin1';
    text = new TextDecoder('latin1').decode(head);
  }
  return { encoding, bomBytes, delimiter: detectDelimiter(text) };
}

export async function* csvRows(fullPath: string): AsyncGenerator<SourceRow> {
  const handle = await open(fullPath, 'r').catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? permanent('ENOENT', 'the uploaded file is no longer stored') : error;
  });
  let head: Buffer;
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const sniff = sniffCsv(head);
  // The encoding is decided per file as it streams (csv-encoding.ts); the sniff's is only the head's.
  const decoder = new CsvDecoder(sniff.bomBytes > 0 ? 'utf-8' : null);
  const parser = new CsvParser(sniff.delimiter);
  /** Records read so far, the header included: the number of the data row being read. */
  let records = 0;
  const decoded = (part: DecodedChunk) => {
    const rows = check(parser.push(part.text));
    records += rows.length;
    if (part.mixed) throw mixedEncoding(part.mixed, records);
    return rows;
  };
  const stream = createReadStream(fullPath, { start: sniff.bomBytes, highWaterMark: 256 * 1024 });
  let first = true;
  const check = (rows: SourceRow[]) => {
    if (first && rows.length > 0) {
      first = false;
      const header = rows[0];
      const columns = Array.isArray(header) ? header.length : 0;
      if (columns > MAX_COLUMNS) {
        throw permanent(
          'TOO_MANY_COLUMNS',
          `the header has ${columns} columns; at most ${MAX_COLUMNS} are supported`,
        );
      }
    }
    return rows;
  };
  try {
    for await (const chunk of stream) {
      for (const row of decoded(decoder.decode(chunk as Buffer))) yield row;
    }
    for (const row of decoded(decoder.end())) yield row;
    for (const row of check(parser.end())) yield row;
  } finally {
    stream.destroy();
  }
}

export function localSourceFiles(root: string): SourceFiles {
  return {
    rows(file, sheetIndex) {
      const full = path.join(root, file.storedPath);
      return file.format === 'csv' ? csvRows(full) : workbookRows(full, file.format, sheetIndex);
    },
    async sheets(file) {
      if (file.format === 'csv') return [null];
      return workbookSheetNames(path.join(root, file.storedPath), file.format);
    },
  };
}

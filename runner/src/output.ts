// Checks the CSV a scraper left in /output without holding it in memory: a regular file (never
// followed through a symlink), within the size cap, UTF-8, a header row, and every record
// parsing as CSV with the header's number of columns, by the parser the import uses
// (@chronomap/csv), so a file that passes imports without a malformed row. Read as a stream, and on
// success handed back open, so the HTTP layer can stream it again as base64 (a 99 MB output
// took the runner from 123 MB to 1.46 GB RSS when it was read whole and encoded at once).
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { CsvFault, CsvRecordCheck } from '@chronomap/csv';

export type OutputCheck =
  { ok: true; rows: number; bytes: number; file: FileHandle } | { ok: false; message: string };

class NotUtf8 extends Error {}

/** Records in the file, the header included, read with the import's own parser, strictly. */
async function countRecords(file: FileHandle): Promise<number> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (chunk?: Buffer): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw new NotUtf8();
    }
  };
  const records = new CsvRecordCheck();
  const stream = file.createReadStream({ start: 0, autoClose: false, highWaterMark: 1024 * 1024 });
  for await (const chunk of stream) records.push(decode(chunk as Buffer));
  records.push(decode());
  return records.end();
}

async function check(file: FileHandle, fileName: string, maxBytes: number): Promise<OutputCheck> {
  const info = await file.stat();
  if (!info.isFile()) return { ok: false, message: `${fileName} is not a regular file` };
  if (info.size > maxBytes)
    return {
      ok: false,
      message: `${fileName} is larger than SCRAPER_MAX_OUTPUT_SIZE_MB (${maxBytes / 1024 / 1024} MB)`,
    };
  if (info.size === 0) return { ok: false, message: `${fileName} is empty: a CSV needs a header row` };
  let records: number;
  try {
    records = await countRecords(file);
  } catch (err) {
    if (err instanceof NotUtf8) return { ok: false, message: `${fileName} is not valid UTF-8` };
    if (err instanceof CsvFault)
      return { ok: false, message: `${fileName} is not valid CSV: ${err.message}` };
    throw err;
  }
  if (records === 0) return { ok: false, message: `${fileName} has no header row` };
  return { ok: true, rows: records - 1, bytes: info.size, file };
}

/** On success the caller owns `file` and must close it. */
export async function checkOutputCsv(
  outputDir: string,
  fileName: string,
  maxBytes: number,
): Promise<OutputCheck> {
  let file: FileHandle;
  try {
    file = await open(
      join(outputDir, fileName),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { ok: false, message: `no ${fileName} in /output: did the scraper call save()?` };
    if (code === 'ELOOP') return { ok: false, message: `${fileName} is a symbolic link` };
    return { ok: false, message: `cannot read ${fileName}: ${code ?? (err as Error).message}` };
  }
  let result: OutputCheck | undefined;
  try {
    result = await check(file, fileName, maxBytes);
    return result;
  } finally {
    if (!result?.ok) await file.close();
  }
}

// Checks the CSV a scraper left in /output without holding it in memory: a regular file (never
// followed through a symlink), within the size cap, UTF-8, a header row, and every record
// parsing as CSV with the header's number of columns. The file is read as a stream, and on
// success handed back open, so the HTTP layer can stream it again as base64 (a 99 MB output
// took the runner from 123 MB to 1.46 GB RSS when it was read whole and encoded at once).
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { CsvError, parse } from 'csv-parse';

export type OutputCheck =
  { ok: true; rows: number; bytes: number; file: FileHandle } | { ok: false; message: string };

class NotUtf8 extends Error {}

/** Passes bytes through, failing at the first byte sequence that is not UTF-8. */
function utf8Check(): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const check = (fn: () => void, callback: (error?: Error) => void) => {
    try {
      fn();
      callback();
    } catch {
      callback(new NotUtf8());
    }
  };
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      check(() => {
        decoder.decode(chunk, { stream: true });
        this.push(chunk);
      }, callback);
    },
    flush(callback) {
      check(() => decoder.decode(), callback);
    },
  });
}

async function countRecords(file: FileHandle): Promise<number> {
  let records = 0;
  await pipeline(
    file.createReadStream({ start: 0, autoClose: false, highWaterMark: 1024 * 1024 }),
    utf8Check(),
    parse({ bom: true, relax_column_count: false, skip_empty_lines: true }),
    new Writable({
      objectMode: true,
      write(_record, _encoding, callback) {
        records += 1;
        callback();
      },
    }),
  );
  return records;
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
    if (err instanceof CsvError)
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

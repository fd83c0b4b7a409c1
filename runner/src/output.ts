// Reads and validates the CSV a scraper left in /output: a regular file (never followed
// through a symlink the scraper planted), within the size cap, UTF-8, a header row, and every
// record parsing as CSV with the header's number of columns.
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';

export type OutputCheck =
  { ok: true; rows: number; bytes: number; content: Buffer } | { ok: false; message: string };

export async function readOutputCsv(
  outputDir: string,
  fileName: string,
  maxBytes: number,
): Promise<OutputCheck> {
  let content: Buffer;
  try {
    const handle = await open(
      join(outputDir, fileName),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
    try {
      const info = await handle.stat();
      if (!info.isFile()) return { ok: false, message: `${fileName} is not a regular file` };
      if (info.size > maxBytes)
        return {
          ok: false,
          message: `${fileName} is larger than SCRAPER_MAX_OUTPUT_SIZE_MB (${maxBytes / 1024 / 1024} MB)`,
        };
      content = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { ok: false, message: `no ${fileName} in /output: did the scraper call save()?` };
    if (code === 'ELOOP') return { ok: false, message: `${fileName} is a symbolic link` };
    return { ok: false, message: `cannot read ${fileName}: ${code ?? (err as Error).message}` };
  }
  if (content.length === 0) return { ok: false, message: `${fileName} is empty: a CSV needs a header row` };
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    return { ok: false, message: `${fileName} is not valid UTF-8` };
  }
  let records = 0;
  try {
    const parser = Readable.from([content]).pipe(
      parse({ bom: true, relax_column_count: false, skip_empty_lines: true }),
    );
    for await (const _record of parser) records += 1;
  } catch (err) {
    return { ok: false, message: `${fileName} is not valid CSV: ${(err as Error).message}` };
  }
  if (records === 0) return { ok: false, message: `${fileName} has no header row` };
  return { ok: true, rows: records - 1, bytes: content.length, content };
}

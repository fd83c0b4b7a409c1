import { createWriteStream } from 'node:fs';

/** Writes a header and lines to a CSV file in 1 MB chunks, waiting when the stream is full. */
export async function writeLines(file: string, header: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(file);
  out.write(`${header}\n`);
  let chunk = '';
  for (const line of lines) {
    chunk += `${line}\n`;
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      chunk = '';
    }
  }
  out.end(chunk);
  await new Promise<void>((resolve) => out.once('close', () => resolve()));
}

/** `line(i)` for i in [0, count). */
export function* numberedLines(count: number, line: (i: number) => string): Generator<string> {
  for (let i = 0; i < count; i++) yield line(i);
}

// A streaming CSV parser (RFC 4180 plus the usual leniency): any one-character delimiter, quoted
// fields with doubled quotes and embedded newlines, LF, CRLF or CR line ends. Written here because
// the ingestion budget (>= 25,000 rows/s end to end over several passes) needs a parser an order of
// magnitude faster than fast-csv's 20,000 rows/s on our files. The runner checks a scraper's output
// with the same parser (record-check.ts), so a file it passes reads the same at import.

/** A row that could not be read (an unterminated quote, a row too long), with the reason. */
export type MalformedCsvRow = { malformed: string };
/** What the parser yields: a row of fields, or a row it could not read. */
export type CsvRow = string[] | MalformedCsvRow;

const QUOTE = 34;
const LF = 10;
const CR = 13;

/** Index of the delimiter or line break that ends the unquoted text starting at `from`. */
function fieldEnd(text: string, from: number, delimiter: number): number {
  let j = from;
  const length = text.length;
  while (j < length) {
    const c = text.charCodeAt(j);
    if (c === delimiter || c === LF || c === CR) return j;
    j++;
  }
  return j;
}

/** Longest row (in characters) the parser holds while it waits for the row's end: 1 MiB. */
export const MAX_ROW_CHARS = 1024 * 1024;

/** Where a row could not be read, and why; the parser goes on after it. */
type Broken = { fieldStart: number; reason: string };

function lineBreakFrom(text: string, from: number): number {
  for (let j = from; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === LF || c === CR) return j;
  }
  return -1;
}

/**
 * Rows come out as arrays of strings; a row that cannot be read (a quote never closed, a row longer
 * than `maxRowChars`) comes out as a MalformedRow, and reading goes on at the line after the one
 * where its broken field starts: an unterminated quote costs its own row, not the rest of the file.
 */
export class CsvParser {
  readonly #delimiter: number;
  readonly #maxRowChars: number;
  #pending = '';
  /** The input up to the next line break belongs to a row already reported malformed. */
  #skipping = false;

  constructor(delimiter: string, options: { maxRowChars?: number } = {}) {
    if (delimiter.length !== 1) throw new RangeError('the delimiter must be one character');
    this.#delimiter = delimiter.charCodeAt(0);
    this.#maxRowChars = options.maxRowChars ?? MAX_ROW_CHARS;
  }

  /** Rows completed by this chunk; a row cut by the chunk's end waits for the next one. */
  push(chunk: string): CsvRow[] {
    if (this.#skipping) {
      const end = lineBreakFrom(chunk, 0);
      if (end === -1) return [];
      this.#skipping = false;
      chunk = chunk.slice(end + 1);
    }
    const text = this.#pending + chunk;
    const { rows, consumed } = this.#read(text, false);
    this.#pending = text.slice(consumed);
    return rows;
  }

  /** The last row, when the input does not end with a line break. */
  end(): CsvRow[] {
    const text = this.#pending;
    this.#pending = '';
    this.#skipping = false;
    return text === '' ? [] : this.#read(text, true).rows;
  }

  #read(text: string, final: boolean): { rows: CsvRow[]; consumed: number } {
    const rows: CsvRow[] = [];
    let from = 0;
    for (;;) {
      const parsed = this.#parse(text, from, final, rows);
      if (!parsed.broken) return { rows, consumed: parsed.consumed };
      rows.push({ malformed: parsed.broken.reason });
      const lineEnd = lineBreakFrom(text, parsed.broken.fieldStart);
      if (lineEnd === -1) {
        // The rest of this line (perhaps megabytes still to come) belongs to the malformed row.
        if (!final) this.#skipping = true;
        return { rows, consumed: text.length };
      }
      from = lineEnd + (text.charCodeAt(lineEnd) === CR && text.charCodeAt(lineEnd + 1) === LF ? 2 : 1);
      if (from >= text.length) return { rows, consumed: text.length };
    }
  }

  /** Rows from `from` on, pushed to `rows`; `consumed` is where the first unfinished row starts. */
  #parse(text: string, from: number, final: boolean, rows: CsvRow[]): { consumed: number; broken?: Broken } {
    const delimiter = this.#delimiter;
    const length = text.length;
    let i = from;
    let rowStart = from;
    // Waiting for more input is fine unless the row has grown past the bound.
    const wait = (fieldStart: number): { consumed: number; broken?: Broken } =>
      length - rowStart > this.#maxRowChars
        ? {
            consumed: rowStart,
            broken: { fieldStart, reason: `the row is longer than ${this.#maxRowChars} characters` },
          }
        : { consumed: rowStart };
    while (i < length) {
      rowStart = i;
      const row: string[] = [];
      for (;;) {
        let value: string;
        const fieldStart = i;
        if (i < length && text.charCodeAt(i) === QUOTE) {
          let segment = i + 1;
          value = '';
          for (;;) {
            const quote = text.indexOf('"', segment);
            if (quote === -1) {
              if (!final) return wait(fieldStart);
              return {
                consumed: rowStart,
                broken: { fieldStart, reason: 'a quoted field is never closed (unterminated quote)' },
              };
            }
            if (quote + 1 >= length && !final) return wait(fieldStart);
            if (text.charCodeAt(quote + 1) === QUOTE) {
              value += text.slice(segment, quote + 1);
              segment = quote + 2;
              continue;
            }
            value += text.slice(segment, quote);
            i = quote + 1;
            break;
          }
          // Text between a closing quote and the next delimiter is kept rather than lost.
          const j = fieldEnd(text, i, delimiter);
          if (j >= length && !final) return wait(fieldStart);
          if (j > i) value += text.slice(i, j);
          i = j;
        } else {
          const j = fieldEnd(text, i, delimiter);
          if (j >= length && !final) return wait(fieldStart);
          value = text.slice(i, j);
          i = j;
        }
        row.push(value);
        if (i >= length) {
          rows.push(row);
          return { consumed: length };
        }
        const c = text.charCodeAt(i);
        if (c === delimiter) {
          i++;
          if (i >= length) {
            if (!final) return wait(i);
            row.push('');
            rows.push(row);
            return { consumed: length };
          }
          continue;
        }
        if (c === CR) {
          if (i + 1 >= length && !final) return wait(i);
          i += text.charCodeAt(i + 1) === LF ? 2 : 1;
        } else i++;
        rows.push(row);
        break;
      }
    }
    return { consumed: length };
  }
}

const CANDIDATES = [',', ';', '\t', '|'];

/**
 * The delimiter of a CSV text from its first lines: the candidate that splits the header into the
 * most fields and the following lines into the same number (quoted parts do not count).
 */
export function detectDelimiter(head: string): string {
  const lines = splitLogicalLines(head, 6);
  let best = ',';
  let bestScore = 0;
  for (const candidate of CANDIDATES) {
    const counts = lines.map((line) => countOutsideQuotes(line, candidate));
    const first = counts[0] ?? 0;
    if (first === 0) continue;
    const consistent = counts.slice(1).filter((count) => count === first).length;
    const score = first * (1 + consistent);
    if (score > bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}

function countOutsideQuotes(line: string, delimiter: string): number {
  let inQuotes = false;
  let count = 0;
  for (const char of line) {
    if (char === '"') inQuotes = !inQuotes;
    else if (char === delimiter && !inQuotes) count++;
  }
  return count;
}

function splitLogicalLines(text: string, max: number): string[] {
  const lines: string[] = [];
  let inQuotes = false;
  let start = 0;
  for (let i = 0; i < text.length && lines.length < max; i++) {
    const char = text[i];
    if (char === '"') inQuotes = !inQuotes;
    else if ((char === '\n' || char === '\r') && !inQuotes) {
      if (i > start) lines.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (lines.length < max && start < text.length) lines.push(text.slice(start));
  // The last line of a head may be cut off; it only counts when it is the only one.
  return lines.length > 1 ? lines.slice(0, -1) : lines;
}

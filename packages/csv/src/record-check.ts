import { CsvParser, type CsvRow, detectDelimiter } from './csv-parser.ts';

// The strict reading a scraper's output gets before the service imports it: the import's own parser
// (lenient: a malformed row is reported and reading goes on), with the first fault failing the whole
// file. A file that passes therefore imports without a malformed or ragged row.

/** How much text decides the delimiter: the import sniffs the first 64 KiB the same way. */
const HEAD_CHARS = 64 * 1024;

/** Why a CSV fails the strict check; the message names the record (1 is the header). */
export class CsvFault extends Error {}

export class CsvRecordCheck {
  #parser: CsvParser | undefined;
  #head = '';
  #columns = -1;
  #records = 0;

  /** Checks the records this text completes; throws CsvFault at the first fault. */
  push(text: string): void {
    if (this.#parser) return this.#check(this.#parser.push(text));
    this.#head += text;
    if (this.#head.length >= HEAD_CHARS) this.#start();
  }

  /** Checks the last record; the number of records read, the header included. */
  end(): number {
    if (!this.#parser) this.#start();
    this.#check((this.#parser as CsvParser).end());
    return this.#records;
  }

  #start(): void {
    const head = this.#head;
    this.#head = '';
    this.#parser = new CsvParser(detectDelimiter(head));
    this.#check(this.#parser.push(head));
  }

  #check(rows: CsvRow[]): void {
    for (const row of rows) {
      const record = ++this.#records;
      if (!Array.isArray(row)) throw new CsvFault(`record ${record}: ${row.malformed}`);
      if (this.#columns === -1) {
        if (row.length === 1 && row[0] === '')
          throw new CsvFault('record 1 is a blank line: a CSV starts with its header row');
        this.#columns = row.length;
        continue;
      }
      if (row.length === this.#columns) continue;
      if (row.length === 1 && row[0] === '') throw new CsvFault(`record ${record} is a blank line`);
      throw new CsvFault(`record ${record} has ${row.length} fields; the header has ${this.#columns}`);
    }
  }
}

export declare const DEFAULT_OUTPUT_DIR: string;
export declare const DEFAULT_OUTPUT_FILE: string;

/** Turns one cell value into its CSV text (identical to the Python helper). */
export declare function formatValue(value: unknown): string;

export declare class Output {
  /** Rows written so far. */
  readonly rowCount: number;
  /** The CSV header: the keys of the first row. */
  readonly headers: string[];
  /** Appends one row; the first row's keys become the header. */
  writeRow(row: Record<string, unknown>): void;
  /** Appends many rows. */
  writeRows(rows: Iterable<Record<string, unknown>>): void;
  /** The rows as an RFC 4180 CSV string (CRLF line ends). */
  toCsvString(): string;
  /** Writes the CSV to the output directory and returns its path. */
  save(filename?: string): string;
}

/** The rows of this scraper run. */
export declare const output: Output;
declare const helper: {
  Output: typeof Output;
  output: Output;
  formatValue: typeof formatValue;
  DEFAULT_OUTPUT_DIR: string;
  DEFAULT_OUTPUT_FILE: string;
};
export default helper;

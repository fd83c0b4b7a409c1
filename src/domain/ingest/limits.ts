// Bounds on what one file row may put into one event (docs/ingestion.md, "Row errors and size bounds").

/** Longest cell stored from a file (characters): a longer one makes its row an error. */
export const MAX_CELL_CHARS = 64 * 1024;
/** Longest row of values stored as one event's data (characters, all cells together). */
export const MAX_ROW_DATA_CHARS = 256 * 1024;

/** Names that would reach an object's prototype if used as a key: refused as column names. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

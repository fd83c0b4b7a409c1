'use strict';
// Collects rows in a scraper and saves them as the CSV the Chronomap runner picks up.
// Plain CommonJS JavaScript on purpose: it runs inside the runner-node image on Debian's
// Node 18 (no type stripping) and must load with both require() and import.
// The CSV format and value rules are identical to the Python module chronomap.scraper; see
// README.md for them (missing keys -> empty field, extra keys -> dropped with one warning).

const fs = require('node:fs');
const path = require('node:path');

const DEFAULT_OUTPUT_DIR = '/output';
const DEFAULT_OUTPUT_FILE = 'data.csv';

/** @param {unknown} value */
function formatValue(value) {
  if (value === null || value === undefined) return '';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype) return JSON.stringify(value);
  return String(value);
}

/** @param {string} text */
function quote(text) {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

class Output {
  constructor() {
    /** @type {string[] | null} */
    this._headers = null;
    /** @type {string[][]} */
    this._rows = [];
    /** @type {Set<string>} */
    this._warned = new Set();
  }

  get rowCount() {
    return this._rows.length;
  }

  get headers() {
    return this._headers ? [...this._headers] : [];
  }

  /** @param {Record<string, unknown>} row */
  writeRow(row) {
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      throw new TypeError(`writeRow expects an object, got ${Array.isArray(row) ? 'array' : typeof row}`);
    }
    const keys = Object.keys(row);
    if (this._headers === null) {
      if (keys.length === 0)
        throw new Error('the first row must have at least one key: it makes the CSV header');
      this._headers = keys;
    }
    for (const key of keys) {
      if (!this._headers.includes(key) && !this._warned.has(key)) {
        this._warned.add(key);
        process.stderr.write(
          `@chronomap/scraper: key '${key}' is not in the header (taken from the first row); its values are dropped\n`,
        );
      }
    }
    const headers = this._headers;
    this._rows.push(
      headers.map((h) => (Object.prototype.hasOwnProperty.call(row, h) ? formatValue(row[h]) : '')),
    );
  }

  /** @param {Iterable<Record<string, unknown>>} rows */
  writeRows(rows) {
    for (const row of rows) this.writeRow(row);
  }

  toCsvString() {
    if (this._headers === null) return '';
    return [this._headers, ...this._rows].map((line) => `${line.map(quote).join(',')}\r\n`).join('');
  }

  /**
   * Writes the CSV (atomically) and returns its path: CHRONOMAP_OUTPUT_FILE (set by the runner),
   * else data.csv, in CHRONOMAP_OUTPUT_DIR, else /output. `filename` overrides the file name.
   * @param {string} [filename]
   */
  save(filename) {
    const directory = process.env.CHRONOMAP_OUTPUT_DIR || DEFAULT_OUTPUT_DIR;
    const name = filename || process.env.CHRONOMAP_OUTPUT_FILE || DEFAULT_OUTPUT_FILE;
    const target = path.join(directory, name);
    if (this._headers === null) {
      process.stderr.write(
        '@chronomap/scraper: save() called with no rows; the file has no header and the run will fail\n',
      );
    }
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const partial = `${target}.partial`;
    fs.writeFileSync(partial, this.toCsvString(), 'utf8');
    fs.renameSync(partial, target);
    return target;
  }
}

const output = new Output();

module.exports = { Output, output, formatValue, DEFAULT_OUTPUT_DIR, DEFAULT_OUTPUT_FILE };

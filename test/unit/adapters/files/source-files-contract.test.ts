import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { localSourceFiles } from '../../../../src/adapters/files/local-source-files.ts';
import type { SourceRow } from '../../../../src/domain/ingest/rows.ts';
import { sourceFilesContract } from '../../../contracts/ingest/source-files.ts';
import { ods, xlsx } from '../../../fixtures/ingest/workbooks.ts';

// localSourceFiles passes the SourceFiles port's behaviour suite, the one the in-memory fake passes
// (test/unit/fakes/ingest/source-files.test.ts), over real files written to a temporary directory:
// a CSV as text, a workbook as an XLSX or ODS archive. No database, so the fast tier runs it.

/** RFC 4180 text; a malformed row is a quote never closed (the contract puts no quote after it). */
function csvText(rows: SourceRow[]): string {
  const field = (value: string) => (/[",\n\r]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  return rows
    .map((row) => (Array.isArray(row) ? row.map(field).join(',') : `"${row.malformed}`))
    .join('\n')
    .concat('\n');
}

const strings = (rows: SourceRow[]) =>
  rows.map((row) => {
    if (!Array.isArray(row)) throw new Error('a workbook has no malformed rows');
    return row;
  });

sourceFilesContract(t, async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'chronomap-source-files-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  return {
    files: localSourceFiles(root),
    async put(file, sheets) {
      const full = path.join(root, file.storedPath);
      mkdirSync(path.dirname(full), { recursive: true });
      if (file.format === 'csv') writeFileSync(full, csvText(sheets[0]?.rows ?? []));
      else {
        const named = sheets.map((sheet) => ({ name: sheet.name ?? '', rows: strings(sheet.rows) }));
        writeFileSync(full, file.format === 'xlsx' ? xlsx(named) : ods(named));
      }
    },
  };
});

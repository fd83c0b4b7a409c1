import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { csvRows, sniffCsv } from '../../../../src/adapters/files/local-source-files.ts';
import { IngestFailure } from '../../../../src/domain/ingest/failures.ts';
import type { SourceRow } from '../../../../src/domain/ingest/rows.ts';

t.test('encodings: UTF-8 with and without BOM, Latin-1 detected; binary and UTF-16 refused', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-csv-'));
  const read = async (bytes: Buffer) => {
    const file = path.join(dir, `${Math.random()}.csv`);
    writeFileSync(file, bytes);
    const rows: SourceRow[] = [];
    for await (const row of csvRows(file)) rows.push(row);
    return rows;
  };
  const text = 'ort;zeit\nKöln;2026-01-01\n';
  t.same(await read(Buffer.from(text)), [
    ['ort', 'zeit'],
    ['Köln', '2026-01-01'],
  ]);
  t.same(await read(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])), [
    ['ort', 'zeit'],
    ['Köln', '2026-01-01'],
  ]);
  t.equal(sniffCsv(Buffer.from(text, 'latin1')).encoding, 'latin1');
  t.same(await read(Buffer.from(text, 'latin1')), [
    ['ort', 'zeit'],
    ['Köln', '2026-01-01'],
  ]);
  await t.rejects(
    read(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])),
    IngestFailure,
  );
  await t.rejects(read(Buffer.from('\ufeffa,b\n', 'utf16le')), /UTF-16/);
  await t.rejects(read(Buffer.alloc(0)), /empty/);
});

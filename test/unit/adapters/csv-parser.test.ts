import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CsvParser, detectDelimiter } from '../../../src/adapters/files/csv-parser.ts';
import { csvRows, sniffCsv } from '../../../src/adapters/files/local-source-files.ts';
import { IngestFailure } from '../../../src/domain/ingest/failures.ts';

const parseAll = (text: string, delimiter = ',', chunk = text.length || 1) => {
  const parser = new CsvParser(delimiter);
  const rows: string[][] = [];
  for (let i = 0; i < text.length; i += chunk) rows.push(...parser.push(text.slice(i, i + chunk)));
  rows.push(...parser.end());
  return rows;
};

const TRICKY = 'id,text,n\r\n1,"quoted, with comma",2\n2,"line one\nline two",3\r3,"say ""hi""",\n4,,"x"y\n';
const EXPECTED = [
  ['id', 'text', 'n'],
  ['1', 'quoted, with comma', '2'],
  ['2', 'line one\nline two', '3'],
  ['3', 'say "hi"', ''],
  ['4', '', 'xy'],
];

t.test('quotes, doubled quotes, embedded newlines and every line ending', async (t) => {
  t.same(parseAll(TRICKY), EXPECTED);
});

t.test('the same rows whatever the chunk boundaries', async (t) => {
  for (const chunk of [1, 2, 3, 5, 7, 11])
    t.same(parseAll(TRICKY, ',', chunk), EXPECTED, `chunks of ${chunk}`);
});

t.test('a last row without a line break, a trailing delimiter, other delimiters', async (t) => {
  t.same(parseAll('a,b\n1,2'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
  t.same(parseAll('a,b\n1,'), [
    ['a', 'b'],
    ['1', ''],
  ]);
  t.same(parseAll('a;b\n"1;2";3\n', ';'), [
    ['a', 'b'],
    ['1;2', '3'],
  ]);
  t.same(parseAll('a\tb\n1\t2\n', '\t'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
});

t.test('delimiter detection', async (t) => {
  t.equal(detectDelimiter('a,b,c\n1,2,3\n'), ',');
  t.equal(detectDelimiter('a;b;c\n1,5;2,5;3\n4;5;6\n'), ';', 'decimal commas do not fool it');
  t.equal(detectDelimiter('a\tb\n1\t2\n'), '\t');
  t.equal(detectDelimiter('a|b|c\n"x|y"|2|3\n'), '|');
  t.equal(detectDelimiter('"name, with comma";b\n1;2\n'), ';', 'quoted delimiters do not count');
});

t.test('encodings: UTF-8 with and without BOM, Latin-1 detected; binary and UTF-16 refused', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-csv-'));
  const read = async (bytes: Buffer) => {
    const file = path.join(dir, `${Math.random()}.csv`);
    writeFileSync(file, bytes);
    const rows: string[][] = [];
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

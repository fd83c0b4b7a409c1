import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CsvParser, detectDelimiter } from '../../../../src/adapters/files/csv-parser.ts';
import type { SourceRow } from '../../../../src/domain/ingest/rows.ts';
import { csvRows, sniffCsv } from '../../../../src/adapters/files/local-source-files.ts';
import { IngestFailure } from '../../../../src/domain/ingest/failures.ts';

const parseAll = (text: string, delimiter = ',', chunk = text.length || 1, maxRowChars?: number) => {
  const parser = new CsvParser(delimiter, maxRowChars ? { maxRowChars } : {});
  const rows: SourceRow[] = [];
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

t.test('an unterminated quote costs its own row, not the rest of the file', async (t) => {
  const text = 'date,title\n2024-01-01,"one\n2024-01-02,two\n2024-01-03,three\n';
  const expected = [
    ['date', 'title'],
    { malformed: 'a quoted field is never closed (unterminated quote)' },
    ['2024-01-02', 'two'],
    ['2024-01-03', 'three'],
  ];
  for (const chunk of [1, 3, 7, text.length])
    t.same(parseAll(text, ',', chunk), expected, `chunks of ${chunk}`);
  t.same(
    parseAll('a,b\r\n1,"x\r\n2,y'),
    [['a', 'b'], { malformed: 'a quoted field is never closed (unterminated quote)' }, ['2', 'y']],
    'CRLF line ends, and a last row without a line break',
  );
  t.same(parseAll('a,b\n1,"never closed'), [
    ['a', 'b'],
    { malformed: 'a quoted field is never closed (unterminated quote)' },
  ]);
});

t.test('a row longer than the bound is malformed; reading goes on at the next line', async (t) => {
  const long = 'x'.repeat(100);
  const expected = [['a', 'b'], { malformed: 'the row is longer than 40 characters' }, ['2', 'y']];
  for (const chunk of [1, 8, 64])
    t.same(parseAll(`a,b\n1,${long}\n2,y\n`, ',', chunk, 40), expected, `unquoted, chunks of ${chunk}`);
  for (const chunk of [1, 8, 64])
    t.same(parseAll(`a,b\n1,"${long}"\n2,y\n`, ',', chunk, 40), expected, `quoted, chunks of ${chunk}`);
  t.same(
    parseAll(`a,b\n1,"${long}\n2,y\n3,z\n`, ',', 8, 40),
    [['a', 'b'], { malformed: 'the row is longer than 40 characters' }, ['2', 'y'], ['3', 'z']],
    'an unterminated quote in a large file: the bound finds it before the end',
  );
  t.same(
    parseAll(`a,b\n1,${'y'.repeat(30)}\n`, ',', 4, 40),
    [
      ['a', 'b'],
      ['1', 'y'.repeat(30)],
    ],
    'under the bound',
  );
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import {
  excelSerialToIso,
  workbookRows,
  workbookSheetNames,
} from '../../../../src/adapters/files/workbook-reader.ts';
import { MAX_COLUMNS } from '../../../../src/adapters/files/limits.ts';
import { ods, xlsx, zip } from '../../../fixtures/ingest/workbooks.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-workbook-'));
const save = (name: string, bytes: Buffer) => {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
};
const collect = async (rows: AsyncIterable<string[]>) => {
  const all: string[][] = [];
  for await (const row of rows) all.push(row);
  return all;
};

const SHEETS = [
  {
    name: 'Quakes & more',
    rows: [
      ['time', 'place', 'mag'],
      [{ date: 46108.5 }, 'Köln <centre>', 4.5],
      [{ dateIso: '2026-03-27T10:00:00Z' }, 'Paris', 3],
    ],
  },
  {
    name: 'Second',
    rows: [
      ['time', 'title'],
      ['2026-01-01T00:00:00Z', 'b'],
    ],
  },
];

/** A minimal XLSX of one sheet whose rows are the given XML (no styles, no shared strings). */
const xlsxWith = (rowsXml: string, prefix = '') =>
  save(
    'one-sheet.xlsx',
    zip([
      {
        name: 'xl/workbook.xml',
        data: Buffer.from(
          `<${prefix}workbook><${prefix}sheets><${prefix}sheet name="S" r:id="rId1"/></${prefix}sheets></${prefix}workbook>`,
        ),
      },
      {
        name: 'xl/_rels/workbook.xml.rels',
        data: Buffer.from(
          '<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>',
        ),
      },
      {
        name: 'xl/worksheets/sheet1.xml',
        data: Buffer.from(
          `<${prefix}worksheet><${prefix}sheetData>${rowsXml}</${prefix}sheetData></${prefix}worksheet>`,
        ),
      },
    ]),
  );
const cellAt = (reference: string) =>
  `<row r="1"><c r="${reference}" t="inlineStr"><is><t>x</t></is></c></row>`;

t.test('excel serial days', async (t) => {
  t.equal(excelSerialToIso(25569), '1970-01-01T00:00:00.000Z');
  t.equal(excelSerialToIso(46108.5), '2026-03-27T12:00:00.000Z');
});

t.test('XLSX: sheet names, shared and inline strings, numbers, dates in a date style', async (t) => {
  const file = save('book.xlsx', xlsx(SHEETS));
  t.same(await workbookSheetNames(file, 'xlsx'), ['Quakes & more', 'Second']);
  t.same(await collect(workbookRows(file, 'xlsx', 0)), [
    ['time', 'place', 'mag'],
    ['2026-03-27T12:00:00.000Z', 'Köln <centre>', '4.5'],
    ['2026-03-27T10:00:00Z', 'Paris', '3'],
  ]);
  t.same(await collect(workbookRows(file, 'xlsx', 1)), [
    ['time', 'title'],
    ['2026-01-01T00:00:00Z', 'b'],
  ]);
});

t.test('ODS: repeated empty cells and a million repeated empty rows cost nothing', async (t) => {
  const file = save('book.ods', ods(SHEETS));
  t.same(await workbookSheetNames(file, 'ods'), ['Quakes & more', 'Second']);
  const rows = await collect(workbookRows(file, 'ods', 0));
  t.same(rows, [
    ['time', 'place', 'mag'],
    ['2026-03-27T12:00:00Z', 'Köln <centre>', '4.5'],
    ['2026-03-27T10:00:00Z', 'Paris', '3'],
  ]);
});

t.test('a zip bomb is refused, not inflated', async (t) => {
  const file = save('bomb.xlsx', xlsx(SHEETS, { bombSheet: 0 }));
  t.same(await workbookSheetNames(file, 'xlsx'), ['Quakes & more', 'Second'], 'the small parts are read');
  await t.rejects(collect(workbookRows(file, 'xlsx', 0)), { code: 'INVALID_FORMAT', message: /zip bomb/ });
  await t.rejects(workbookSheetNames(save('not.xlsx', Buffer.from('time,title\n')), 'xlsx'), {
    message: /not a ZIP/,
  });
});

t.test(
  'a sheet wider than MAX_COLUMNS fails with TOO_MANY_COLUMNS; trailing empty cells do not count',
  async (t) => {
    const odsWith = (cells: string) =>
      save(
        'wide.ods',
        zip([
          {
            name: 'content.xml',
            data: Buffer.from(
              `<office:document-content><office:body><office:spreadsheet><table:table table:name="S"><table:table-row>${cells}</table:table-row></table:table></office:spreadsheet></office:body></office:document-content>`,
            ),
          },
        ]),
      );
    const text = (value: string) =>
      `<table:table-cell office:value-type="string"><text:p>${value}</text:p></table:table-cell>`;
    const empty = (times: number) => `<table:table-cell table:number-columns-repeated="${times}"/>`;
    t.same(await collect(workbookRows(odsWith(`${text('a')}${empty(16_383)}`), 'ods', 0)), [['a']]);
    t.same(await collect(workbookRows(odsWith(`${empty(MAX_COLUMNS - 2)}${text('b')}`), 'ods', 0)), [
      [...Array<string>(MAX_COLUMNS - 2).fill(''), 'b'],
    ]);
    await t.rejects(collect(workbookRows(odsWith(`${empty(MAX_COLUMNS)}${text('c')}`), 'ods', 0)), {
      code: 'TOO_MANY_COLUMNS',
    });

    t.same((await collect(workbookRows(xlsxWith(cellAt('C1')), 'xlsx', 0)))[0], ['', '', 'x']);
    // Column NTQ is the 10,001st (14*676 + 20*26 + 17).
    await t.rejects(collect(workbookRows(xlsxWith(cellAt('NTQ1')), 'xlsx', 0)), { code: 'TOO_MANY_COLUMNS' });
  },
);

t.test('XLSX written with a namespace prefix (x:row, x:c) reads like the unprefixed form', async (t) => {
  const rows =
    '<x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>hi</x:t></x:is></x:c><x:c r="B1"><x:v>2</x:v></x:c></x:row>';
  const file = xlsxWith(rows, 'x:');
  t.same(await workbookSheetNames(file, 'xlsx'), ['S']);
  t.same(await collect(workbookRows(file, 'xlsx', 0)), [['hi', '2']]);
});

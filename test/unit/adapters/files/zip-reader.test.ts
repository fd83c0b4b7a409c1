import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { workbookRows } from '../../../../src/adapters/files/workbook-reader.ts';
import { DEFAULT_ZIP_LIMITS, ZipArchive } from '../../../../src/adapters/files/zip-reader.ts';
import { xlsx, zip } from '../../../fixtures/ingest/workbooks.ts';

// The archive limits are checked before the work: from the directory (entry count, declared sizes,
// declared ratio) before a byte is inflated, and on the running total while inflating.

const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-zip-'));
const save = (name: string, bytes: Buffer) => {
  const file = path.join(dir, name);
  writeFileSync(file, bytes);
  return file;
};
t.test('too many entries are refused when the directory is opened', async (t) => {
  const file = save(
    'many.zip',
    zip(Array.from({ length: 5 }, (_v, i) => ({ name: `part${i}.xml`, data: Buffer.from('<a/>') }))),
  );
  await t.rejects(ZipArchive.open(file, { ...DEFAULT_ZIP_LIMITS, maxEntries: 4 }), {
    code: 'INVALID_FORMAT',
    message: /zip bomb: 5 entries, more than 4/,
  });
  const archive = await ZipArchive.open(file, { ...DEFAULT_ZIP_LIMITS, maxEntries: 5 });
  t.equal(await archive.text('part4.xml'), '<a/>');
  t.equal(await archive.text('missing.xml'), null);
  archive.close();
});

t.test(
  'a declared size over the entry cap, or a declared ratio over the limit, is refused before inflating',
  async (t) => {
    const file = save(
      'declared.zip',
      zip([
        { name: 'big.xml', data: Buffer.from('<a/>'), declaredSize: 2_000 },
        { name: 'dense.xml', data: Buffer.alloc(100_000, 0x20) },
      ]),
    );
    const archive = await ZipArchive.open(file, { ...DEFAULT_ZIP_LIMITS, maxEntryBytes: 1_000 });
    await t.rejects(archive.textChunks('big.xml'), { message: /big\.xml would be 2000 bytes/ });
    archive.close();
    const ratio = await ZipArchive.open(file, { ...DEFAULT_ZIP_LIMITS, maxRatio: 50 });
    await t.rejects(ratio.textChunks('dense.xml'), { message: /dense\.xml expands \d+ times/ });
    ratio.close();
  },
);

t.test('the inflated total is capped across entries', async (t) => {
  const file = save(
    'total.zip',
    zip([
      { name: 'one.xml', data: Buffer.alloc(600, 0x61) },
      { name: 'two.xml', data: Buffer.alloc(600, 0x62) },
    ]),
  );
  const archive = await ZipArchive.open(file, { ...DEFAULT_ZIP_LIMITS, maxTotalBytes: 1_000 });
  t.equal((await archive.text('one.xml'))?.length, 600);
  await t.rejects(archive.text('two.xml'), { message: /more than 1000 bytes in all/ });
  archive.close();
});

t.test('a sheet with an entity bomb in its DTD is a damaged workbook, not expanded', async (t) => {
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>' +
    '<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>&lol2;</t></is></c></row></sheetData></worksheet>';
  const book = xlsx([{ name: 'S', rows: [['x']] }]);
  const file = save('book.xlsx', book);
  const archive = await ZipArchive.open(file);
  const parts = ['xl/workbook.xml', 'xl/_rels/workbook.xml.rels', 'xl/styles.xml'];
  const files = await Promise.all(
    parts.map(async (name) => ({ name, data: Buffer.from((await archive.text(name)) ?? '') })),
  );
  archive.close();
  const bomb = save(
    'laughs.xlsx',
    zip([...files, { name: 'xl/worksheets/sheet1.xml', data: Buffer.from(laughs) }]),
  );
  const rows = async () => {
    for await (const _row of workbookRows(bomb, 'xlsx', 0)) void _row;
  };
  await t.rejects(rows(), { code: 'INVALID_FORMAT', message: /the workbook is damaged/ });
});

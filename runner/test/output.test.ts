import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkOutputCsv } from '../src/output.ts';

// The output check without a container: files written here stand for what a scraper left in
// /output. It reads with the import's own parser, so what passes here imports cleanly.

const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-output-'));
const check = async (name: string, content: string | Buffer, maxBytes = 1024 * 1024) => {
  writeFileSync(path.join(dir, name), content);
  const result = await checkOutputCsv(dir, name, maxBytes);
  if (result.ok) await result.file.close();
  return result.ok ? { rows: result.rows, bytes: result.bytes } : result.message;
};

t.test('a well-formed CSV passes with its row count', async (t) => {
  const text = '\ufefftitle,date,notes\r\nA,2024-01-01,"two\nlines"\r\nB,2024-01-02,"say ""hi"""\r\n';
  t.same(await check('good.csv', text), { rows: 2, bytes: Buffer.byteLength(text) });
  t.same(await check('semicolons.csv', 'a;b\n1;2\n3;4'), { rows: 2, bytes: 11 });
});

t.test('the first fault fails the run, naming the record', async (t) => {
  t.equal(
    await check('ragged.csv', 'a,b\n1,2\n3\n'),
    'ragged.csv is not valid CSV: record 3 has 1 fields; the header has 2',
  );
  t.equal(
    await check('open.csv', 'a,b\n1,"never closed\n'),
    'open.csv is not valid CSV: record 2: a quoted field is never closed (unterminated quote)',
  );
  t.equal(
    await check('blank.csv', 'a,b\n1,2\n\n3,4\n'),
    'blank.csv is not valid CSV: record 3 is a blank line',
  );
  t.equal(
    await check('latin1.csv', Buffer.from('a,b\nZürich,1\n', 'latin1')),
    'latin1.csv is not valid UTF-8',
  );
  t.equal(await check('empty.csv', ''), 'empty.csv is empty: a CSV needs a header row');
  t.equal(await check('bom.csv', '\ufeff'), 'bom.csv has no header row');
  t.match(await check('big.csv', 'a\n'.repeat(100), 10), /larger than SCRAPER_MAX_OUTPUT_SIZE_MB/);
});

t.test('no file, or a symbolic link instead of one', async (t) => {
  t.same(await checkOutputCsv(dir, 'missing.csv', 1024), {
    ok: false,
    message: 'no missing.csv in /output: did the scraper call save()?',
  });
  symlinkSync('/etc/passwd', path.join(dir, 'link.csv'));
  t.same(await checkOutputCsv(dir, 'link.csv', 1024), { ok: false, message: 'link.csv is a symbolic link' });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { csvRows } from '../../../../src/adapters/files/local-source-files.ts';
import { IngestFailure } from '../../../../src/domain/ingest/failures.ts';
import type { SourceRow } from '../../../../src/domain/ingest/rows.ts';

// Issue 30 §7: a CSV file's encoding is decided per file, over the whole file, from small real files
// written here: valid UTF-8 is UTF-8; no valid multi-byte UTF-8 sequence at all is Windows-1252
// (Latin-1); both at once is refused with the first row that breaks the encoding of the rows before
// it. Files larger than the 64 kB head and the 256 kB read chunks check the decisions taken after
// the head and characters cut between chunks.

const dir = mkdtempSync(path.join(os.tmpdir(), 'chronomap-encoding-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

const latin1 = (text: string) => Buffer.from(text, 'latin1');
const utf8 = (text: string) => Buffer.from(text, 'utf8');

async function read(name: string, ...parts: Buffer[]): Promise<SourceRow[]> {
  const file = path.join(dir, name);
  writeFileSync(file, Buffer.concat(parts));
  const rows: SourceRow[] = [];
  for await (const row of csvRows(file)) rows.push(row);
  return rows;
}

/** ASCII rows `place,n` filling about `bytes`. */
function asciiRows(bytes: number, from = 0): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = from; size < bytes; i += 1) {
    const line = `Bern ${i},${i}\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('');
}

t.test('a file of valid UTF-8 is UTF-8', async (t) => {
  t.same(await read('utf8.csv', utf8('ort,n\nZürich,1\nKöln,2\n')), [
    ['ort', 'n'],
    ['Zürich', '1'],
    ['Köln', '2'],
  ]);
  // Past the head and over chunk edges: every third byte of the filler is a cut point somewhere.
  const filler = 'Zürich ✓ 😀,1\n'.repeat(30_000);
  const rows = await read('utf8-large.csv', utf8(`ort,n\n${filler}`));
  t.equal(rows.length, 30_001);
  t.ok(
    rows.slice(1).every((row) => Array.isArray(row) && row[0] === 'Zürich ✓ 😀'),
    'characters cut between chunks',
  );
});

t.test(
  'a file without valid UTF-8 is Latin-1 (Windows-1252), also when it shows only after the head',
  async (t) => {
    t.same(
      await read(
        'latin1.csv',
        latin1('ort,n\nZürich,1\nSão Paulo,2\n'),
        Buffer.from([0x80, 0x2c, 0x33, 0x0a]),
      ),
      [
        ['ort', 'n'],
        ['Zürich', '1'],
        ['São Paulo', '2'],
        ['€', '3'],
      ],
    );
    // 300 kB of ASCII first: the head says nothing; before, the file was read as UTF-8 and "Zürich"
    // became "Z\uFFFDrich".
    const rows = await read('latin1-late.csv', utf8(`ort,n\n${asciiRows(300_000)}`), latin1('Zürich,1\n'));
    t.same(rows.at(-1), ['Zürich', '1']);
    // A Latin-1 letter that could begin a UTF-8 sequence, cut off by the end of a 256 kB read.
    const edge = 256 * 1024 - 'ort,n\n'.length - 1;
    const cut = await read('latin1-edge.csv', utf8('ort,n\n'), utf8('x'.repeat(edge)), latin1('Ã,1\nÄ\n'));
    t.same(cut.slice(1), [[`${'x'.repeat(edge)}Ã`, '1'], ['Ä']]);
  },
);

t.test(
  'a file mixing UTF-8 and Latin-1 is refused, naming the first row that breaks the encoding',
  async (t) => {
    const refusal = async (rows: Promise<SourceRow[]>) => {
      const error = await rows.then(
        () => null,
        (failure: unknown) => failure,
      );
      t.ok(error instanceof IngestFailure, 'the import fails');
      return error as IngestFailure;
    };
    // Latin-1 first, then "Zürich" in UTF-8 on data row 3: read as Latin-1 it would be "ZÃ¼rich".
    t.match(
      await refusal(
        read('latin1-then-utf8.csv', latin1('ort,n\nKöln,1\nBern,2\n'), utf8('Zürich,3\nGenf,4\n')),
      ),
      {
        classification: 'permanent',
        code: 'MIXED_ENCODING',
        message:
          /it is Latin-1 \(Windows-1252\) up to row 3, which holds "ü" written in UTF-8 \(it reads as "Ã¼" in Latin-1\); save the file as UTF-8/,
      },
    );
    // UTF-8 first, then a Latin-1 "è" on data row 2.
    t.match(await refusal(read('utf8-then-latin1.csv', utf8('ort,n\nZürich,1\n'), latin1('Genève,2\n'))), {
      code: 'MIXED_ENCODING',
      message: /it is UTF-8 up to row 2, which holds the byte 0xE8 \("è" in Latin-1\), which is not UTF-8/,
    });
    // Both far past the head: the row is still named.
    const filler = asciiRows(400_000);
    const rows = filler.split('\n').length - 1;
    t.match(await refusal(read('late-mix.csv', utf8(`ort,n\nZürich,0\n${filler}`), latin1('Genève,x\n'))), {
      message: new RegExp(`up to row ${rows + 2}, which holds`),
    });
    // In the header.
    t.match(await refusal(read('header-mix.csv', utf8('Straße,'), latin1('Größe\n1,2\n'))), {
      message: /it is UTF-8 up to the header row, which holds the byte 0xF6/,
    });
  },
);

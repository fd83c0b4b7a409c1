import t from 'tap';
import { CsvFault, CsvParser, CsvRecordCheck, type CsvRow, detectDelimiter } from '../src/index.ts';

const parseAll = (text: string, delimiter = ',', chunk = text.length || 1, maxRowChars?: number) => {
  const parser = new CsvParser(delimiter, maxRowChars ? { maxRowChars } : {});
  const rows: CsvRow[] = [];
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

/** The strict check over `text` cut into chunks of `chunk` characters: records, or the fault. */
const strict = (text: string, chunk = text.length || 1): number | string => {
  const check = new CsvRecordCheck();
  try {
    for (let i = 0; i < text.length; i += chunk) check.push(text.slice(i, i + chunk));
    return check.end();
  } catch (error) {
    if (error instanceof CsvFault) return error.message;
    throw error;
  }
};

t.test('the strict check counts what the lenient parser reads, and fails at the first fault', async (t) => {
  for (const chunk of [1, 5, TRICKY.length]) t.equal(strict(TRICKY, chunk), 5, `chunks of ${chunk}`);
  t.equal(strict('a;b\n1;2\n'), 2, 'the delimiter is detected as at import');
  t.equal(strict('a,b\n1,"open\n2,y\n'), 'record 2: a quoted field is never closed (unterminated quote)');
  t.equal(strict('a,b\n1,2,3\n'), 'record 2 has 3 fields; the header has 2');
  t.equal(strict('a,b\n1\n'), 'record 2 has 1 fields; the header has 2');
  t.equal(
    strict('a,b\n1,2\n\n3,4\n'),
    'record 3 is a blank line',
    'a blank line, which the import would read as a short row, fails here',
  );
  t.equal(strict('\na,b\n'), 'record 1 is a blank line: a CSV starts with its header row');
  t.equal(strict('title\nx\n\n'), 3, 'in a one-column file an empty line is an empty value, as at import');
  t.equal(strict(''), 0, 'no text, no records: the caller says there is no header');
  const big = `a,b\n${'1,2\n'.repeat(40_000)}`;
  t.equal(strict(big, 4096), 40_001, 'past the 64 KiB the delimiter is sniffed from');
  t.equal(strict(`${big}3\n`, 4096), 'record 40002 has 1 fields; the header has 2');
});

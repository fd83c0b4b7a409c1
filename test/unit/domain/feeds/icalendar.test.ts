import t from 'tap';
import {
  calendarTime,
  escapeText,
  eventUid,
  foldLine,
  icalendar,
} from '../../../../src/domain/feeds/icalendar.ts';

// RFC 5545's text rules for the iCalendar feed of a saved view: escaping (§3.3.11), line folding at
// 75 octets without splitting a UTF-8 character (§3.1), UTC times, stable UIDs.

const octets = (line: string) => Buffer.byteLength(line, 'utf8');

t.test('TEXT escapes backslash, semicolon, comma and every kind of newline', async (t) => {
  t.equal(escapeText('a\\b;c,d'), 'a\\\\b\\;c\\,d');
  t.equal(escapeText('one\r\ntwo\nthree\rfour'), 'one\\ntwo\\nthree\\nfour');
  t.equal(escapeText('tab\tkept, bell\u0007 dropped'), 'tab\tkept\\, bell dropped');
  t.equal(escapeText('\\n'), '\\\\n', 'a literal backslash-n stays two characters');
});

t.test('folding: 75 octets a line, continuations start with a space, characters whole', async (t) => {
  t.equal(foldLine('SUMMARY:short'), 'SUMMARY:short', 'a short line is left alone');
  const exact = `X:${'a'.repeat(73)}`;
  t.equal(foldLine(exact), exact, 'exactly 75 octets: one line');
  const long = `DESCRIPTION:${'x'.repeat(200)}`;
  const folded = foldLine(long).split('\r\n');
  t.ok(folded.length > 2);
  t.ok(
    folded.every((line) => octets(line) <= 75),
    'no line over 75 octets',
  );
  t.ok(
    folded.slice(1).every((line) => line.startsWith(' ')),
    'continuations begin with a space',
  );
  t.equal(
    folded.map((line, i) => (i === 0 ? line : line.slice(1))).join(''),
    long,
    'unfolds to the original',
  );

  // Three-octet characters (東) and four-octet ones (😀) must not be cut.
  const wide = `SUMMARY:${'東京😀'.repeat(30)}`;
  const parts = foldLine(wide).split('\r\n');
  t.ok(parts.every((line) => octets(line) <= 75));
  t.ok(
    parts.every((line) => !line.includes('\uFFFD') && Buffer.from(line, 'utf8').toString('utf8') === line),
  );
  t.equal(parts.map((line, i) => (i === 0 ? line : line.slice(1))).join(''), wide);
  t.ok(
    parts.some((line) => octets(line) < 75),
    'a line ends early rather than split a character',
  );
});

t.test('times, UIDs and the calendar frame', async (t) => {
  t.equal(calendarTime('2026-12-24T18:30:05.123Z'), '20261224T183005Z');
  t.equal(eventUid('https://maps.example.org', 42), 'event-42@maps.example.org');
  const text = icalendar({ title: 'Advent, 2026', origin: 'https://maps.example.org', code: 'AbCdEfGhIj' }, [
    {
      event: {
        id: 42,
        title: 'Market; stalls, music',
        dataset: { id: 1, title: 'Markets', catalog: 'city' },
        data: {},
        location: { longitude: 13.4, latitude: 52.5 },
        eventTimestamp: '2026-12-24T18:30:00.000Z',
        isValid: true,
      },
      storedAt: '2026-11-01T00:00:00.000Z',
      updatedAt: '2026-11-02T00:00:00.000Z',
    },
  ]);
  t.ok(text.endsWith('END:VCALENDAR\r\n'));
  t.notMatch(text.replace(/\r\n/g, ''), /[\r\n]/, 'every line ends in CRLF');
  t.match(text, /\r\nX-WR-CALNAME:Advent\\, 2026\r\n/);
  t.match(text, /\r\nSUMMARY:Market\\; stalls\\, music\r\n/);
  t.match(text, /\r\nDTSTAMP:20261102T000000Z\r\n/, 'DTSTAMP: when the event last changed');
  t.match(text, /\r\nGEO:52\.5;13\.4\r\n/);
});

import t from 'tap';
import {
  encodeCursor,
  keysetPagination,
  parseCursor,
  positionAfter,
} from '../../../../src/domain/read/event-cursor.ts';
import { parseEventSort } from '../../../../src/domain/read/sort.ts';
import { ValidationError } from '../../../../src/domain/errors.ts';

// Keyset cursors (src/domain/read/event-cursor.ts): what a page's last event encodes to, and every way a
// cursor can be refused.

const event = { id: 42, eventTimestamp: '2024-05-01T10:00:00.123Z', isValid: false, dataset: { id: 7 } };

t.test('a cursor round-trips the position after an event, for each column sort', async (t) => {
  for (const [text, value] of [
    ['-eventTimestamp', '2024-05-01T10:00:00.123Z'],
    ['eventTimestamp', '2024-05-01T10:00:00.123Z'],
    ['id', null],
    ['-id', null],
    ['dataset', 7],
    ['-isValid', false],
  ] as const) {
    const sort = parseEventSort(text);
    const position = positionAfter(sort, event);
    t.same(position, { id: 42, value }, text);
    const cursor = encodeCursor(sort, position ?? { id: 0, value: null });
    t.match(cursor, /^[A-Za-z0-9_-]+$/, `${text}: URL-safe`);
    t.same(parseCursor(cursor, sort), { id: 42, value }, `${text}: parsed back`);
  }
  t.equal(positionAfter(parseEventSort('data.value'), event), null, 'no position in a data-field sort');
  t.equal(parseCursor(undefined, parseEventSort('id')), null, 'absent: no cursor');
  t.equal(parseCursor('', parseEventSort('id')), null, 'empty: no cursor');
});

t.test('a cursor that is not one of ours is a 400 naming it', async (t) => {
  const sort = parseEventSort('-eventTimestamp');
  const forge = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const bad: Record<string, unknown> = {
    'not base64url': 'a b',
    'not JSON': Buffer.from('{{').toString('base64url'),
    'an object': forge({ sort: '-eventTimestamp' }),
    'too few items': forge(['-eventTimestamp', '2024-05-01T10:00:00.000Z']),
    'id zero': forge(['-eventTimestamp', '2024-05-01T10:00:00.000Z', 0]),
    'id not an integer': forge(['-eventTimestamp', '2024-05-01T10:00:00.000Z', 1.5]),
    'value not a timestamp': forge(['-eventTimestamp', "x'; drop table events; --", 3]),
    'impossible date': forge(['-eventTimestamp', '2024-02-30T00:00:00.000Z', 3]),
    'year zero': forge(['-eventTimestamp', '0000-01-01T00:00:00.000Z', 3]),
    'another sort': forge(['id', null, 3]),
    'too long': 'A'.repeat(300),
    'repeated parameter': ['a', 'b'],
  };
  for (const [name, raw] of Object.entries(bad)) {
    t.throws(() => parseCursor(raw, sort), ValidationError, name);
    try {
      parseCursor(raw, sort);
    } catch (error) {
      t.equal((error as ValidationError).field, 'cursor', `${name}: names cursor`);
    }
  }
  t.throws(
    () => parseCursor(forge(['data.v', 1, 3]), parseEventSort('data.v')),
    ValidationError,
    'data sorts',
  );
  t.throws(
    () => parseCursor(forge(['dataset', 'x', 3]), parseEventSort('dataset')),
    ValidationError,
    'dataset id',
  );
  t.throws(
    () => parseCursor(forge(['isValid', 1, 3]), parseEventSort('isValid')),
    ValidationError,
    'boolean',
  );
});

t.test('a keyset page has no page numbers', async (t) => {
  t.same(keysetPagination(10, 95, true), {
    page: null,
    limit: 10,
    totalDocs: 95,
    totalPages: 10,
    hasNextPage: true,
    hasPrevPage: true,
    nextPage: null,
    prevPage: null,
  });
});

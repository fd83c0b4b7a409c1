import t from 'tap';
import {
  addressToGeocode,
  columnPositions,
  contentHash,
  rowToEvent,
  uniqueIdFor,
} from '../../../../src/domain/ingest/rows.ts';

t.test('content hashes are stable, distinct and respect value boundaries', async (t) => {
  t.equal(contentHash(['a', 'b']), contentHash(['a', 'b']));
  t.not(contentHash(['ab', 'c']), contentHash(['a', 'bc']));
  t.not(contentHash(['a', 'b']), contentHash(['b', 'a']));
  t.match(contentHash([]), /^h[0-9a-f]{32}$/);
  const seen = new Set<string>();
  for (let i = 0; i < 100_000; i++) seen.add(contentHash([String(i), 'x']));
  t.equal(seen.size, 100_000, 'no collisions among 100,000 similar rows');
});

t.test('duplicate keys by id strategy', async (t) => {
  t.same(uniqueIdFor(['e1', 'x'], 0, 'external-id'), { ok: true, id: 'e1' });
  t.same(uniqueIdFor(['', 'x'], 0, 'external-id'), { ok: false, reason: 'the id column is empty' });
  t.equal(uniqueIdFor(['e1'], -1, 'external-id').ok, false);
  t.same(uniqueIdFor(['e1', 'x'], 0, 'auto'), { ok: true, id: 'e1' });
  t.same(uniqueIdFor(['', 'x'], 0, 'auto'), { ok: true, id: contentHash(['', 'x']) });
  t.same(uniqueIdFor(['e1', 'x'], 0, 'content-hash'), { ok: true, id: contentHash(['e1', 'x']) });
});

const headers = ['time', 'lat', 'lon', 'place', 'title'];
const columns = columnPositions(headers, {
  timestamp: 'time',
  latitude: 'lat',
  longitude: 'lon',
  address: 'place',
  title: 'title',
});

t.test('a row becomes an event with typed data', async (t) => {
  const result = rowToEvent(
    headers,
    ['2026-01-02T03:04:05Z', '52.5', '13.4', 'Berlin', 'Demo'],
    columns,
    'k',
    null,
  );
  t.same(result, {
    ok: true,
    event: {
      uniqueId: 'k',
      title: 'Demo',
      data: { time: '2026-01-02T03:04:05Z', lat: 52.5, lon: 13.4, place: 'Berlin', title: 'Demo' },
      location: { latitude: 52.5, longitude: 13.4 },
      eventTimestamp: '2026-01-02T03:04:05.000Z',
      isValid: true,
    },
  });
});

t.test('invalid dates, out-of-range coordinates and ragged rows are row problems', async (t) => {
  const bad = (values: string[]) => {
    const result = rowToEvent(headers, values, columns, 'k', null);
    return result.ok ? null : result.problem.field;
  };
  t.equal(bad(['not a date', '1', '1', '', '']), 'timestamp');
  t.equal(bad(['2026-01-01', '91', '1', '', '']), 'latitude');
  t.equal(bad(['2026-01-01', '1', '-181', '', '']), 'longitude');
  t.equal(bad(['2026-01-01', '1', '1', '', '', 'extra']), 'row');
  t.equal(bad(['2026-01-01']), null, 'short rows are padded with empty values');
});

t.test('event data: no prototype, and values of unnamed columns kept under their position', async (t) => {
  const result = rowToEvent(
    ['time', '', 'title', ''],
    ['2026-01-01', 'stray value', 'x', ''],
    columnPositions(['time', '', 'title', ''], { timestamp: 'time' }),
    'k',
    null,
  );
  if (!result.ok) throw new Error('the row is valid');
  t.equal(Object.getPrototypeOf(result.event.data), null, 'no prototype to reach');
  t.same({ ...result.event.data }, { time: '2026-01-01', '(column 2)': 'stray value', title: 'x' });
});

t.test('(0,0) is no location; a geocoded location fills a row without coordinates', async (t) => {
  const zero = rowToEvent(headers, ['2026-01-01', '0', '0', '', ''], columns, 'k', null);
  t.equal(zero.ok && zero.event.location, null);
  const geocoded = rowToEvent(headers, ['2026-01-01', '', '', 'Berlin', ''], columns, 'k', {
    latitude: 52.52,
    longitude: 13.405,
  });
  t.same(geocoded.ok && geocoded.event.location, { latitude: 52.52, longitude: 13.405 });
  t.equal(addressToGeocode(['2026-01-01', '', '', '  Berlin   Mitte ', ''], columns), 'Berlin Mitte');
  t.equal(addressToGeocode(['2026-01-01', '1', '2', 'Berlin', ''], columns), null, 'own coordinates win');
});

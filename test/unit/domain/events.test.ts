import t from 'tap';
import { ValidationError } from '../../../src/domain/errors.ts';
import { parseLocation, parseTimestamp, typedValue } from '../../../src/domain/events.ts';

t.test('parseLocation', async (t) => {
  t.same(parseLocation('-15.9208', '-172.4385'), { latitude: -15.9208, longitude: -172.4385 });
  t.equal(parseLocation('', '10'), null, 'a missing part means no location');
  t.equal(parseLocation('0', '0'), null, '(0,0) is not a location');
  t.throws(() => parseLocation('91', '0'), ValidationError);
  t.throws(() => parseLocation('10', '-180.5'), ValidationError);
  t.throws(() => parseLocation('north', '3'), ValidationError);
});

t.test('parseTimestamp normalises to UTC ISO 8601', async (t) => {
  t.equal(parseTimestamp('2026-03-27T23:35:09.558Z'), '2026-03-27T23:35:09.558Z');
  t.equal(parseTimestamp('2026-03-28T01:35:09+02:00'), '2026-03-27T23:35:09.000Z');
  t.throws(() => parseTimestamp('yesterday-ish'), ValidationError);
  t.throws(() => parseTimestamp(''), ValidationError);
});

t.test('typedValue turns numeric and boolean text into values and keeps the rest', async (t) => {
  t.equal(typedValue('5.4'), 5.4);
  t.equal(typedValue('-10'), -10);
  t.equal(typedValue('1e3'), 1000);
  t.equal(typedValue('true'), true);
  t.equal(typedValue(''), null);
  t.equal(typedValue('007'), '007', 'leading zeros are identifiers, not numbers');
  t.equal(typedValue('145 km E of Hihifo, Tonga'), '145 km E of Hihifo, Tonga');
});

import t from 'tap';
import {
  compareSchemas,
  detectSchema,
  parseCoordinatePair,
  parseDateValue,
  valueType,
} from '../../../../src/domain/ingest/schema.ts';

t.test('value types', async (t) => {
  t.equal(valueType('12'), 'integer');
  t.equal(valueType('-3.5e2'), 'number');
  t.equal(valueType('true'), 'boolean');
  t.equal(valueType('2026-03-27T23:35:09.558Z'), 'date');
  t.equal(valueType('27.03.2026'), 'date');
  t.equal(valueType('  '), 'empty');
  t.equal(valueType('145 km E of Hihifo, Tonga'), 'string');
});

t.test('dates: ISO, European dotted, slashed, RFC 2822; impossible dates are not dates', async (t) => {
  t.equal(parseDateValue('2026-03-27'), Date.UTC(2026, 2, 27));
  t.equal(parseDateValue('2026-03-27 10:00'), Date.UTC(2026, 2, 27, 10), 'no zone means UTC');
  t.equal(parseDateValue('27.03.2026 10:30'), Date.UTC(2026, 2, 27, 10, 30));
  t.equal(parseDateValue('2026/03/27'), Date.UTC(2026, 2, 27));
  t.equal(parseDateValue('Fri, 27 Mar 2026 10:00:00 GMT'), Date.UTC(2026, 2, 27, 10));
  t.ok(Number.isNaN(parseDateValue('31.02.2026')));
  t.ok(Number.isNaN(parseDateValue('2026-13-01')));
  t.ok(Number.isNaN(parseDateValue('12345')), 'a bare number is not a date');
  t.ok(Number.isNaN(parseDateValue('yesterday')));
});

t.test('coordinate pairs', async (t) => {
  t.same(parseCoordinatePair('52.52, 13.405'), { latitude: 52.52, longitude: 13.405 });
  t.same(parseCoordinatePair('(-33.9 151.2)'), { latitude: -33.9, longitude: 151.2 });
  t.equal(parseCoordinatePair('95, 10'), null);
  t.equal(parseCoordinatePair('Berlin'), null);
});

t.test('detects the USGS columns by name and content', async (t) => {
  const headers = ['time', 'latitude', 'longitude', 'depth', 'mag', 'id', 'place'];
  const sample = [
    [
      '2026-03-27T23:35:09.558Z',
      '-15.9208',
      '-172.4385',
      '10.0',
      '5.4',
      'us7000s8a0',
      '145 km E of Hihifo, Tonga',
    ],
    [
      '2026-03-27T23:06:18.191Z',
      '-23.2954',
      '-179.8342',
      '544.247',
      '4.5',
      'us7000s89u',
      'south of the Fiji Islands',
    ],
  ];
  const schema = detectSchema(headers, sample);
  t.same(schema.mapping, {
    timestamp: 'time',
    latitude: 'latitude',
    longitude: 'longitude',
    address: 'place',
    // No column is named like a title: the place names the event (and is still its address).
    title: 'place',
    id: 'id',
  });
  t.same(
    schema.fields.map((f) => f.type),
    ['date', 'number', 'number', 'number', 'number', 'string', 'string'],
  );
});

t.test('detects German, Spanish and French column names', async (t) => {
  const de = detectSchema(
    ['Datum', 'Breite', 'Länge', 'Titel', 'Ort'],
    [['27.03.2026', '52.5', '13.4', 'Demo', 'Berlin']],
  );
  t.same(de.mapping, {
    timestamp: 'Datum',
    latitude: 'Breite',
    longitude: 'Länge',
    address: 'Ort',
    title: 'Titel',
  });
  const es = detectSchema(
    ['fecha', 'dirección', 'nombre'],
    [['2026-01-02', 'Calle Mayor 1, Madrid', 'Fiesta']],
  );
  t.same(es.mapping, { timestamp: 'fecha', address: 'dirección', title: 'nombre' });
  const fr = detectSchema(
    ['date_heure', 'coordonnées', 'titre'],
    [['2026-01-02 10:00', '48.85, 2.35', 'Fête']],
  );
  t.same(fr.mapping, { timestamp: 'date_heure', coordinates: 'coordonnées', title: 'titre' });
});

t.test('detects by content when names say nothing, and honours explicit mappings', async (t) => {
  const schema = detectSchema(
    ['a', 'b'],
    [
      ['2026-01-01', 'x'],
      ['2026-01-02', 'y'],
    ],
  );
  t.equal(schema.mapping.timestamp, 'a');
  const named = detectSchema(['when', 'other'], [['2026-01-01', '2026-01-02']], { timestamp: 'other' });
  t.equal(named.mapping.timestamp, 'other');
  const noLat = detectSchema(['lat', 'lon'], [['120', '10']]);
  t.equal(noLat.mapping.latitude, undefined, 'a "lat" column out of range is not a latitude');
});

t.test('schema drift by mode', async (t) => {
  const time = { name: 'time', type: 'date' as const, nullable: false };
  const v1 = [time, { name: 'mag', type: 'integer' as const, nullable: false }];
  const wider = [time, { name: 'mag', type: 'number' as const, nullable: false }];
  const added = [...v1, { name: 'depth', type: 'number' as const, nullable: true }];
  const retyped = [time, { name: 'mag', type: 'string' as const, nullable: false }];
  const removed = [time];
  t.equal(compareSchemas(null, v1, 'strict').breaking, false, 'the first version never drifts');
  t.equal(compareSchemas(v1, v1, 'strict').breaking, false);
  t.equal(compareSchemas(v1, added, 'strict').breaking, true);
  t.equal(compareSchemas(v1, added, 'additive').breaking, false);
  t.equal(compareSchemas(v1, wider, 'additive').breaking, false, 'integer to number widens');
  t.equal(compareSchemas(v1, retyped, 'additive').breaking, true);
  t.equal(compareSchemas(v1, removed, 'additive').breaking, true);
  t.equal(compareSchemas(v1, retyped, 'flexible').breaking, false);
  t.same(compareSchemas(v1, added, 'strict').added, ['depth']);
});

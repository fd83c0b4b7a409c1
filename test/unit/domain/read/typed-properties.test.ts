import t from 'tap';
import {
  propertyFields,
  propertySchemas,
  typedProperties,
  typedValue,
} from '../../../../src/domain/read/typed-properties.ts';

// The typed-properties rule: names (collisions prefixed), conversions (a value that does not convert
// is null, never another type) and the schema of each property.

t.test('names: a field that collides with a fixed property is prefixed until unique', async (t) => {
  const fields = propertyFields([
    { name: 'mag', type: 'number' },
    { name: 'title', type: 'string' },
    { name: 'data_title', type: 'integer' },
    { name: 'id', type: 'empty' },
    { name: '', type: 'string' },
  ]);
  t.same(fields, [
    { name: 'mag', key: 'mag', type: 'number' },
    { name: 'data_title', key: 'title', type: 'string' },
    { name: 'data_data_title', key: 'data_title', type: 'integer' },
    { name: 'data_id', key: 'id', type: 'string' },
  ]);
});

t.test('values: converted to the field type or null', async (t) => {
  t.equal(typedValue(4.5, 'number'), 4.5);
  t.equal(typedValue(' 3.0 ', 'number'), 3);
  t.equal(typedValue('1e999', 'number'), null, 'an exponent past two digits is not read');
  t.equal(typedValue('deep', 'number'), null);
  t.equal(typedValue(2.5, 'integer'), null);
  t.equal(typedValue('12', 'integer'), 12);
  t.equal(typedValue('Ja', 'boolean'), true);
  t.equal(typedValue('non', 'boolean'), false);
  t.equal(typedValue(1, 'boolean'), null);
  t.equal(typedValue('2024-03-04 12:00', 'date'), '2024-03-04T12:00:00.000Z', 'no zone: UTC');
  t.equal(typedValue('2024-03-04T12:00:00+02:00', 'date'), '2024-03-04T10:00:00.000Z');
  t.equal(typedValue('04.03.2024', 'date'), null, 'only ISO 8601');
  t.equal(typedValue(7, 'string'), '7');
  t.equal(typedValue({ a: 1 }, 'string'), '{"a":1}');
  t.equal(typedValue(undefined, 'string'), null);
  const fields = propertyFields([
    { name: 'mag', type: 'number' },
    { name: 'toString', type: 'string' },
  ]);
  t.same(typedProperties(fields, { mag: '5' }), { mag: 5, toString: null }, 'own keys of data only');
  t.same(propertySchemas(fields).mag, { title: 'mag', type: 'number' });
});

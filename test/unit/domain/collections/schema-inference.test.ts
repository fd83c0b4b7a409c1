import t from 'tap';
import { inferFields } from '../../../../src/domain/collections/schema-inference.ts';

t.test('inferFields walks nested objects and tells dates from strings', async (t) => {
  const fields = inferFields(
    [
      { mag: 4.5, place: 'Tonga', startDate: '2024-05-01', address: { city: 'Berlin' }, tags: ['a'] },
      { mag: '5', place: 'Fiji', startDate: '2024-05-02T10:00:00Z', flag: true, note: null },
    ],
    ['startDate'],
  );
  const byPath = Object.fromEntries(fields.map((field) => [field.path, field]));
  t.same(byPath['data.mag']?.types, ['number', 'string']);
  t.equal(byPath['data.mag']?.present, 2);
  t.same(byPath['data.startDate']?.types, ['date']);
  t.equal(byPath['data.startDate']?.declaredDate, true);
  t.same(byPath['data.address']?.types, ['object']);
  t.same(byPath['data.address.city']?.types, ['string']);
  t.same(byPath['data.tags']?.types, ['array']);
  t.same(byPath['data.flag']?.types, ['boolean']);
  t.same(byPath['data.note']?.types, ['null']);
  t.same(byPath['data.place']?.examples, ['Tonga', 'Fiji']);
  t.same(
    fields.map((field) => field.path),
    [...fields.map((field) => field.path)].sort(),
  );
});

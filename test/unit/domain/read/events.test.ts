import t from 'tap';
import { typedValue } from '../../../../src/domain/read/events.ts';

t.test('typedValue turns numeric and boolean text into values and keeps the rest', async (t) => {
  t.equal(typedValue('5.4'), 5.4);
  t.equal(typedValue('-10'), -10);
  t.equal(typedValue('1e3'), 1000);
  t.equal(typedValue('true'), true);
  t.equal(typedValue(''), null);
  t.equal(typedValue('007'), '007', 'leading zeros are identifiers, not numbers');
  t.equal(typedValue('145 km E of Hihifo, Tonga'), '145 km E of Hihifo, Tonga');
});

import t from 'tap';
import { ValidationError } from '../../../../src/domain/errors.ts';
import { parseIngestSettings } from '../../../../src/domain/ingest/settings.ts';

// fieldMapping.address: one column, several, or a template; anything else is a 400 naming the field.

const mapped = (address: unknown) =>
  parseIngestSettings({ fieldMapping: { address } }, undefined).fieldMapping;

t.test('an address from one column, several columns or a template', async (t) => {
  t.same(mapped('place'), { address: 'place' });
  t.same(mapped(['city', 'region', 'country']), { address: ['city', 'region', 'country'] });
  t.same(mapped('{city}, {country}'), { address: '{city}, {country}' });
});

t.test('bounded: no empty, non-string, too many or too long columns', async (t) => {
  for (const bad of ['', [], [''], [1], Array(9).fill('c'), 'x'.repeat(301), { city: 'city' }, 5, null]) {
    t.throws(() => mapped(bad), ValidationError, JSON.stringify(bad).slice(0, 40));
    try {
      mapped(bad);
    } catch (error) {
      t.match(error, { field: 'settings.fieldMapping.address' });
    }
  }
});

import t from 'tap';
import {
  addressColumns,
  compileAddress,
  composeAddress,
  proposeAddressColumns,
} from '../../../../../src/domain/ingest/geocoding/address-template.ts';

const header = ['time', 'city', 'region', 'country'];
const row = ['2026-01-01', 'Köln', 'NRW', 'Germany'];

t.test('several columns are joined with commas, empty ones left out', async (t) => {
  const plan = compileAddress(['city', 'region', 'country'], header);
  t.equal(composeAddress(plan, row), 'Köln, NRW, Germany');
  t.equal(composeAddress(plan, ['x', 'Köln', ' ', 'Germany']), 'Köln, Germany');
  t.equal(composeAddress(plan, ['x', '', '', '']), '', 'nothing to geocode');
});

t.test('a template fills in column values by name', async (t) => {
  t.same(addressColumns('{city} ({country})'), ['city', 'country']);
  t.equal(composeAddress(compileAddress('{city}, {country}', header), row), 'Köln, Germany');
  t.equal(
    composeAddress(compileAddress('{city}, {region}, {country}', header), ['x', 'Köln', '', 'DE']),
    'Köln, DE',
  );
  t.equal(composeAddress(compileAddress('city', header), row), 'Köln', 'a plain name is one column');
  t.equal(composeAddress(compileAddress('{missing}, {country}', header), row), 'Germany');
});

t.test('city-, region- and country-like columns are proposed together', async (t) => {
  t.same(proposeAddressColumns(['Date', 'City', 'State', 'Country Code']), ['City', 'State', 'Country Code']);
  t.same(proposeAddressColumns(['datum', 'stadt', 'land']), ['stadt', 'land']);
  t.equal(proposeAddressColumns(['date', 'city', 'title']), null, 'a city alone is one column');
  t.equal(proposeAddressColumns(['date', 'region', 'country']), null, 'no city, no place');
});

import t from 'tap';
import { countryNamesOf } from '../../../../../src/domain/ingest/geocoding/spelling.ts';
import { addressParts, placeKey } from '../../../../../src/domain/ingest/geocoding/place-key.ts';
import {
  type GazetteerLookup,
  type GazetteerPlace,
  type PlaceMatch,
  type RegionRef,
  resolveAddress,
} from '../../../../../src/domain/ingest/geocoding/resolve-address.ts';

// A gazetteer of a few real places, enough to show exonyms, constraints and ambiguity.
const place = (
  name: string,
  country: string,
  admin1: string,
  population: number,
  latitude: number,
  longitude: number,
  featureCode = 'PPL',
): GazetteerPlace => ({ name, country, admin1, population, latitude, longitude, featureCode });

const koeln = place('Köln', 'DE', '07', 963395, 50.93, 6.95, 'PPLA2');
const cologneIt = place('Cologne', 'IT', '09', 7032, 45.58, 9.94, 'PPLA3');
const cologneUs = place('Cologne', 'US', 'MN', 1605, 44.77, -93.78);
const sevilla = place('Sevilla', 'ES', '51', 703206, 37.38, -5.97, 'PPLA');
const sevilleUs = place('Seville', 'US', 'OH', 2296, 41.01, -81.86);
const springfieldMo = place('Springfield', 'US', 'MO', 166810, 37.22, -93.3, 'PPLA2');
const springfieldMa = place('Springfield', 'US', 'MA', 155929, 42.1, -72.59, 'PPLA2');
const springfieldIl = place('Springfield', 'US', 'IL', 116565, 39.8, -89.64, 'PPLA');
const munich = place('Munich', 'DE', '02', 1260391, 48.14, 11.58, 'PPLA');
const losAngeles = place('Los Angeles', 'US', 'CA', 3971883, 34.05, -118.24, 'PPLA2');

const names: Record<string, PlaceMatch[]> = {
  koln: [{ place: koeln, alternate: false }],
  cologne: [
    { place: koeln, alternate: true },
    { place: cologneIt, alternate: false },
    { place: cologneUs, alternate: false },
  ],
  sevilla: [{ place: sevilla, alternate: false }],
  seville: [
    { place: sevilla, alternate: true },
    { place: sevilleUs, alternate: false },
  ],
  springfield: [springfieldMo, springfieldMa, springfieldIl].map((p) => ({ place: p, alternate: false })),
  munich: [{ place: munich, alternate: false }],
  munchen: [{ place: munich, alternate: true }],
  'los angeles': [{ place: losAngeles, alternate: false }],
};
const countries: Record<string, string[]> = {
  germany: ['DE'],
  deutschland: ['DE'],
  de: ['DE'],
  deu: ['DE'],
  spain: ['ES'],
  es: ['ES'],
  italy: ['IT'],
  us: ['US'],
  usa: ['US'],
  ca: ['CA'],
  by: ['BY'],
  'united kingdom': ['GB'],
};
const regions: Record<string, RegionRef[]> = {
  bavaria: [{ country: 'DE', admin1: '02' }],
  bayern: [{ country: 'DE', admin1: '02' }],
  by: [{ country: 'DE', admin1: '02' }],
  illinois: [{ country: 'US', admin1: 'IL' }],
  il: [{ country: 'US', admin1: 'IL' }],
  ohio: [{ country: 'US', admin1: 'OH' }],
  ca: [{ country: 'US', admin1: 'CA' }],
  manchester: [{ country: 'JM', admin1: '04' }],
};
const lookup: GazetteerLookup = {
  places: (key) => (Object.hasOwn(names, key) ? (names[key] ?? []) : []),
  countries: (key) => (Object.hasOwn(countries, key) ? (countries[key] ?? []) : []),
  regions: (key) => (Object.hasOwn(regions, key) ? (regions[key] ?? []) : []),
  regionName: (country, admin1) => `${country}.${admin1}`,
  countryNames: (country) =>
    countryNamesOf(Object.keys(names).filter((key) => names[key]?.some((m) => m.place.country === country))),
  regionPlaces: () => [],
  supplementPlaces: () => [],
};

const answer = (address: string) => resolveAddress(lookup, address).best;

t.test('names are compared without case, accents or punctuation', async (t) => {
  t.equal(placeKey('São Paulo'), placeKey('sao-paulo'));
  t.equal(placeKey('Köln'), 'koln');
  t.equal(placeKey('Straße'), 'strasse');
  t.same(
    addressParts('12 km NE of Köln, Germany').map((p) => [p.key, p.near]),
    [
      ['koln', true],
      ['germany', false],
    ],
  );
});

t.test('exonyms find the place under its English name', async (t) => {
  t.equal(answer('Cologne, Germany')?.matchedName, 'Köln');
  t.equal(answer('Cologne, DE')?.matchedName, 'Köln');
  t.equal(answer('Seville, Spain')?.matchedName, 'Sevilla');
  t.equal(answer('München')?.matchedName, 'Munich');
  // Without a country the big city under its exonym outweighs the hamlets of that name.
  const cologne = answer('Cologne');
  t.equal(cologne?.matchedCountry, 'DE');
  t.ok((cologne?.confidence ?? 0) > 0.9);
});

t.test('a named country is never overruled', async (t) => {
  t.equal(answer('Cologne, Italy')?.matchedCountry, 'IT');
  t.equal(answer('Seville, Ohio')?.matchedCountry, 'US');
  t.equal(answer('Köln, Deutschland')?.matchedCountry, 'DE');
  // Köln is the only place of that name: in Spain there is none, and no other country is picked.
  const outside = resolveAddress(lookup, 'Köln, Spain');
  t.equal(outside.best, null);
  t.match(outside.failure, /inside the given country or region/);
  t.match(outside.candidates[0], { name: 'Köln', rejected: 'outside "Spain"' });
});

t.test('regions by name or code constrain the place', async (t) => {
  t.equal(answer('Munich, Bavaria')?.matchedName, 'Munich');
  t.equal(answer('Munich, BY, DE')?.matchedName, 'Munich');
  t.equal(answer('Munich, Bayern, Deutschland')?.matchedName, 'Munich');
  t.equal(answer('Springfield, IL')?.matchedRegion, 'US.IL');
  t.equal(answer('Springfield, Illinois, USA')?.matchedRegion, 'US.IL');
  // "CA" is Canada or California: the Los Angeles in California satisfies it.
  t.equal(answer('Los Angeles, CA')?.matchedCountry, 'US');
  t.equal(resolveAddress(lookup, 'Munich, Illinois').best, null);
});

t.test('a region the named country does not have constrains nothing', async (t) => {
  const best = answer('Köln, Manchester, Germany');
  t.equal(best?.matchedName, 'Köln');
  t.ok((best?.confidence ?? 1) < 0.95, 'the unchecked part lowers the confidence');
});

t.test('ambiguity inside the constraints is a low confidence, not a coin toss', async (t) => {
  const springfield = resolveAddress(lookup, 'Springfield, US');
  t.ok((springfield.best?.confidence ?? 1) < 0.5);
  t.equal(springfield.candidates.filter((c) => c.rejected === null).length, 3);
  t.ok(springfield.candidates[0]!.score >= springfield.candidates[1]!.score, 'best first');
});

t.test('a later part is a less direct answer; nothing known is not found', async (t) => {
  const museum = answer('Museum Ludwig, Köln, Germany');
  t.equal(museum?.matchedName, 'Köln');
  t.ok((museum?.confidence ?? 1) < 0.8);
  t.same(resolveAddress(lookup, 'Atlantis').failure, 'no matching place');
  t.same(resolveAddress(lookup, ' , ').failure, 'empty address');
});

t.test('a hostile address is refused before any work', async (t) => {
  t.match(resolveAddress(lookup, `${'Köln, '.repeat(20)}Germany`).failure, /more than 12/);
  t.match(resolveAddress(lookup, 'x'.repeat(501)).failure, /longer than 500/);
});

import t from 'tap';
import { countryNamesOf } from '../../../../../src/domain/ingest/geocoding/spelling.ts';
import { isStreetLike } from '../../../../../src/domain/ingest/geocoding/address-constraints.ts';
import { addressParts } from '../../../../../src/domain/ingest/geocoding/place-key.ts';
import {
  AMBIGUOUS_CONFIDENCE,
  type GazetteerLookup,
  type GazetteerPlace,
  type PlaceMatch,
  type RegionRef,
  resolveAddress,
} from '../../../../../src/domain/ingest/geocoding/resolve-address.ts';

// Issue 33's rules on a small gazetteer of real places: every spelling of a country constrains,
// a two-letter code is first a country code, every part is accounted for, and ambiguity inside a
// country is said.

const place = (
  name: string,
  country: string,
  admin1: string,
  population: number,
  latitude: number,
  longitude: number,
  featureCode = 'PPL',
): GazetteerPlace => ({ name, country, admin1, population, latitude, longitude, featureCode });

const laGomeraGt = place('La Gomera', 'GT', 'ES', 9000, 14.08, -91.05);
const sanSebastianGomera = place('San Sebastián de La Gomera', 'ES', '53', 8000, 28.09, -17.11, 'PPLA2');
const helena = place('Helena', 'US', 'MT', 28190, 46.59, -112.04, 'PPLA');
const maltaMt = place('Malta', 'US', 'MT', 1963, 48.36, -107.87, 'PPLA2');
const sanAntonioTx = place('San Antonio', 'US', 'TX', 1469845, 29.42, -98.49, 'PPLA2');
const sanAntonioVe = place('San Antonio del Táchira', 'VE', '20', 32458, 7.81, -72.44, 'PPLA2');
const seoul = place('Seoul', 'KR', '11', 10349312, 37.57, 126.98, 'PPLC');
const atlantis = place('Atlantis', 'ZA', '11', 60266, -33.57, 18.49);
const berlin = place('Berlin', 'DE', '16', 3426354, 52.52, 13.41, 'PPLC');
const portsmouth = [
  place('Portsmouth', 'US', 'VA', 96201, 36.84, -76.3, 'PPLA2'),
  place('Portsmouth', 'US', 'OH', 20409, 38.73, -82.99, 'PPLA2'),
  place('Portsmouth', 'US', 'NH', 21530, 43.07, -70.76),
];
const paris = place('Paris', 'FR', '11', 2138551, 48.85, 2.35, 'PPLC');
const parisTx = place('Paris', 'US', 'TX', 25171, 33.66, -95.56, 'PPLA2');
const ganzhou = place('Ganzhou', 'CN', '03', 0, 25.85, 114.93, 'PPLA2');
const zhangye = place('Zhangye', 'CN', '15', 100000, 38.93, 100.45, 'PPLA2');
const nadi = place('Nadi', 'FJ', '05', 42284, -17.8, 177.42);
const colonia = place('Colonia', 'FM', '04', 7371, 9.52, 138.12, 'PPLA');
const kolonia = place('Kolonia', 'FM', '02', 6074, 6.96, 158.21, 'PPLA');
const taichung = place('Taichung', 'TW', '04', 1040725, 24.15, 120.68, 'PPLA2');
const taitung = place('Taitung', 'TW', '04', 0, 22.76, 121.14, 'PPLA2');
const oltinkolKk = place('Oltinko‘l', 'UZ', '09', 59122, 43.07, 58.9);
const partizanske = place('Partizánske', 'SK', '05', 24000, 48.63, 18.37);
const topolcany = place('Topoľčany', 'SK', '04', 26000, 48.56, 18.18, 'PPLA2');
const kosice = place('Košice', 'SK', '03', 240000, 48.72, 21.26, 'PPLA');
const oltinkolAn = place('Oltinko‘l', 'UZ', '01', 0, 40.8, 72.17, 'PPLA2');

// The supplement (a newer extract's places the main gazetteer lacks): one name, no population.
const glanmire = place('Glanmire', 'IE', 'M', 0, 51.92, -8.4, '');
const supplement: Record<string, PlaceMatch[]> = {
  glanmire: [{ place: glanmire, alternate: false }],
  // A place of the supplement under a name the main gazetteer holds in that country.
  helena: [{ place: place('Helena', 'US', 'MT', 0, 47.0, -110.0, ''), alternate: false }],
  // A Montana town only the supplement holds ("MT" is first Malta's code).
  zortman: [{ place: place('Zortman', 'US', 'MT', 0, 47.92, -108.53, ''), alternate: false }],
  kain: [
    { place: place('Kain', 'BE', 'WAL', 0, 50.64, 3.4, ''), alternate: false },
    { place: place('Kain', 'BE', 'VLG', 0, 51.2, 5.0, ''), alternate: false },
  ],
};

const names: Record<string, PlaceMatch[]> = {
  'la gomera': [{ place: laGomeraGt, alternate: false }],
  'san sebastian de la gomera': [{ place: sanSebastianGomera, alternate: false }],
  helena: [{ place: helena, alternate: false }],
  malta: [{ place: maltaMt, alternate: false }],
  'san antonio': [
    { place: sanAntonioTx, alternate: false },
    { place: sanAntonioVe, alternate: true },
  ],
  seoul: [{ place: seoul, alternate: false }],
  atlantis: [{ place: atlantis, alternate: false }],
  berlin: [{ place: berlin, alternate: false }],
  portsmouth: portsmouth.map((p) => ({ place: p, alternate: false })),
  paris: [
    { place: paris, alternate: false },
    { place: parisTx, alternate: false },
  ],
  ganzhou: [
    { place: zhangye, alternate: true },
    { place: ganzhou, alternate: false },
  ],
  nadi: [{ place: nadi, alternate: false }],
  partizanske: [{ place: partizanske, alternate: false }],
  topolcany: [{ place: topolcany, alternate: false }],
  kosice: [{ place: kosice, alternate: false }],
  colonia: [
    { place: colonia, alternate: false },
    { place: kolonia, alternate: true },
  ],
  taichung: [
    { place: taichung, alternate: false },
    { place: taitung, alternate: true },
  ],
  'oltinko l': [
    { place: oltinkolKk, alternate: false },
    { place: oltinkolAn, alternate: false },
  ],
};
const countries: Record<string, string[]> = {
  es: ['ES'],
  spain: ['ES'],
  mt: ['MT'],
  malta: ['MT'],
  us: ['US'],
  de: ['DE'],
  germany: ['DE'],
  'venezuela bolivarian republic of': ['VE'],
  'korea republic of': ['KR'],
  china: ['CN'],
  ba: ['BA'],
  fiji: ['FJ'],
  fm: ['FM'],
  tw: ['TW'],
  uz: ['UZ'],
  slovakia: ['SK'],
  ie: ['IE'],
  ireland: ['IE'],
  france: ['FR'],
  be: ['BE'],
};
const regions: Record<string, RegionRef[]> = {
  es: [{ country: 'GT', admin1: 'ES' }],
  mt: [{ country: 'US', admin1: 'MT' }],
  berlin: [{ country: 'DE', admin1: '16' }],
  nitra: [{ country: 'SK', admin1: '04' }],
};
const lookup: GazetteerLookup = {
  places: (key) => (Object.hasOwn(names, key) ? (names[key] ?? []) : []),
  countries: (key) => (Object.hasOwn(countries, key) ? (countries[key] ?? []) : []),
  regions: (key) => (Object.hasOwn(regions, key) ? (regions[key] ?? []) : []),
  regionName: (country, admin1) => `${country}.${admin1}`,
  countryNames: (country) =>
    countryNamesOf(Object.keys(names).filter((key) => names[key]?.some((m) => m.place.country === country))),
  regionPlaces: (country, admin1) =>
    Object.values(names)
      .flat()
      .map((m) => m.place)
      .filter((p) => p.country === country && p.admin1 === admin1),
  supplementPlaces: (key) => (Object.hasOwn(supplement, key) ? (supplement[key] ?? []) : []),
};
const resolve = (address: string) => resolveAddress(lookup, address);

t.test('a two-letter code after a city is first the ISO country code', async (t) => {
  // "ES" is also a Guatemalan department, and Guatemala has a La Gomera: Spain has none here.
  const gomera = resolve('La Gomera, ES');
  t.equal(gomera.best, null);
  t.match(gomera.failure, /inside the given country or region/);
  t.match(gomera.candidates[0], { country: 'GT', rejected: 'outside "ES"' });
  t.equal(resolve('San Sebastián de La Gomera, ES').best?.matchedCountry, 'ES');
});

t.test('a US state code when the country of the code has no place of the name', async (t) => {
  const helenaMt = resolve('Helena, MT').best;
  t.match(helenaMt, { matchedName: 'Helena', matchedRegion: 'US.MT', precision: 'city' });
  t.ok((helenaMt?.confidence ?? 0) >= 0.9);
  // Malta the country and Malta, Montana both fit "Malta, MT".
  const malta = resolve('Malta, MT').best;
  t.equal(malta?.matchedRegion, 'US.MT');
  t.ok((malta?.confidence ?? 1) <= AMBIGUOUS_CONFIDENCE, 'low confidence');
});

t.test('ISO short names with parentheses or a comma constrain like any name', async (t) => {
  t.match(resolve('San Antonio, Venezuela (Bolivarian Republic of)').best, { matchedCountry: 'VE' });
  t.match(resolve('Seoul, Korea, Republic of').best, { matchedName: 'Seoul', matchedCountry: 'KR' });
  const unknown = resolve('San Antonio, Fooland');
  t.equal(unknown.best, null, 'an unknown country is no world-wide guess');
  t.equal(unknown.failure, '"Fooland" is not a known country, region or place');
});

t.test('a first part that names nothing is not replaced by a later part', async (t) => {
  const made = resolve('Xyzzyville, Atlantis');
  t.equal(made.best, null);
  t.equal(made.failure, 'no matching place: "Xyzzyville" is not a known place');
  t.equal(resolve('Xyzzyville').failure, 'no matching place');
  t.equal(resolve('Xyzzyville, Germany').best, null);
});

t.test('a street, square or venue in a town is the town, at precision locality', async (t) => {
  const square = resolve('Alexanderplatz, Berlin, Germany').best;
  t.match(square, { matchedName: 'Berlin', precision: 'locality', candidateCount: 1 });
  const town = resolve('Berlin, Germany').best;
  t.ok((square?.confidence ?? 0) >= 0.5, 'placed');
  t.ok((square?.confidence ?? 1) < (town?.confidence ?? 0), 'less sure than the town itself');
  for (const text of ['Alexanderplatz', 'Calle Mayor 1', 'Museum Ludwig', 'Rue de la Paix', 'Hauptstraße 5'])
    t.ok(isStreetLike(addressParts(text)[0]!), text);
  for (const text of ['Xyzzyville', 'Springfield', 'Atlantis'])
    t.notOk(isStreetLike(addressParts(text)[0]!), text);
});

t.test('several places of a name in one country, none dominant: low confidence, all counted', async (t) => {
  const ambiguous = resolve('Portsmouth, US');
  t.match(ambiguous.best, { matchedRegion: 'US.VA', candidateCount: 3 });
  t.ok((ambiguous.best?.confidence ?? 1) <= AMBIGUOUS_CONFIDENCE);
  t.equal(ambiguous.candidates.filter((c) => c.rejected === null).length, 3);
  // An administrative seat of unknown population cannot be outweighed.
  t.ok((resolve('Ganzhou, China').best?.confidence ?? 1) <= AMBIGUOUS_CONFIDENCE);
  // A capital outweighs the others more than enough: Paris alone is Paris, France.
  t.match(resolve('Paris').best, { matchedCountry: 'FR', candidateCount: 2 });
  t.ok((resolve('Paris').best?.confidence ?? 0) >= 0.5);
});

t.test('a code before a part naming another country is not that country', async (t) => {
  // "Ba" is Bosnia's code and a Fijian province: before "Fiji" it is not Bosnia.
  const fiji = resolve('Nadi, Ba, Fiji').best;
  t.match(fiji, { matchedName: 'Nadi', matchedCountry: 'FJ' });
  t.ok((fiji?.confidence ?? 0) >= 0.5);
  // After the city, with no other country named, it is still Bosnia's code.
  t.equal(resolve('Nadi, BA').best, null);
});

t.test('what a place known by the name under its main name outweighs', async (t) => {
  // Kolonia has "Colonia" only among its alternate names.
  t.ok((resolve('Colonia, FM').best?.confidence ?? 0) >= 0.5);
  // A town of 100,000+ outweighs a seat of unknown population; a smaller one does not.
  t.match(resolve('Taichung, TW').best, { matchedName: 'Taichung' });
  t.ok((resolve('Taichung, TW').best?.confidence ?? 0) >= 0.5);
  t.ok((resolve('Oltinko‘l, UZ').best?.confidence ?? 1) <= AMBIGUOUS_CONFIDENCE);
});

t.test('a place of the named country just across the border of the named region', async (t) => {
  // GeoNames puts Partizánske in Trenčín, within 50 km of Topoľčany (Nitra region).
  const border = resolve('Partizánske, Nitra, Slovakia').best;
  t.match(border, { matchedName: 'Partizánske', matchedCountry: 'SK' });
  t.equal(border?.confidence, 0.855, '0.95 × 0.9');
  // Košice is far from every place of the Nitra region.
  t.equal(resolve('Košice, Nitra, Slovakia').best, null);
  // Without a named country a region is not widened.
  t.equal(resolve('Partizánske, Nitra').best, null);
});

t.test('a town only the supplement holds is found inside the constraints, never outside', async (t) => {
  for (const address of ['Glanmire, IE', 'Glanmire, Ireland', 'Glanmire']) {
    const best = resolveAddress(lookup, address).best;
    t.equal(best?.matchedName, 'Glanmire', address);
    t.ok((best?.confidence ?? 0) >= 0.5 && (best?.confidence ?? 1) < 0.95, `${address}: placed, lowered`);
  }
  t.equal(resolveAddress(lookup, 'Glanmire, France').best, null);
  // The main gazetteer's place of the name comes first: the supplement is read only without one.
  t.equal(resolveAddress(lookup, 'Helena, MT').best?.location.latitude, helena.latitude);
  // Two places of the supplement, none with a population to compare: ambiguous.
  const kain = resolveAddress(lookup, 'Kain, BE').best;
  t.equal(kain?.confidence !== undefined && kain.confidence <= AMBIGUOUS_CONFIDENCE, true);
  t.equal(kain?.candidateCount, 2);
  // The US state rule reaches the supplement's places too, lowered as any supplement answer.
  const zortman = resolveAddress(lookup, 'Zortman, MT').best;
  t.match(zortman, { matchedName: 'Zortman', matchedRegion: 'US.MT' });
  t.ok((zortman?.confidence ?? 0) >= 0.5 && (zortman?.confidence ?? 1) < 0.95, 'placed, lowered');
  t.equal(resolveAddress(lookup, 'Zortman, NT').best, null, 'not in another state');
  // A street is never looked up among the supplement's names.
  t.equal(resolveAddress(lookup, 'Glanmire Road 4, Glanmire, IE').best?.precision, 'locality');
});

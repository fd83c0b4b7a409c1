import type { AddressPart } from './place-key.ts';
import { placeKey, withoutArticle } from './place-key.ts';
import type { GazetteerLookup, GazetteerPlace, RegionRef } from './gazetteer-lookup.ts';

// What the parts after the first say about where the place is (docs/ingestion.md, "Geocoding
// rules"): a country (any spelling: ISO alpha-2 or alpha-3 code, ISO short name with its
// parentheses or comma, common or local name), a first-level region (name or ISO 3166-2 code), or
// a place it lies near. A two- or three-letter code is first an ISO country code; it is a region code
// only of a country a later part names (and, before a part naming another country, never that
// country), and a two-letter code is a US state's only when the country has no place of the name
// (resolve-address.ts, the US state rule).

export type Constraint = {
  part: AddressPart;
  countries: readonly string[];
  regions: readonly RegionRef[];
  /** Places of the part's name: the place must lie within NEAR_KM of one of them. */
  near: readonly GazetteerPlace[];
  /** For a two-letter country code: the US state of that code, read only when the country has no place. */
  usStates: readonly RegionRef[];
};

/** A part after the first that names nothing known: the last one fails the address, others lower it. */
type UnknownPart = { part: AddressPart; unknown: true };

/** How close a place must be to a place named by a later part ("Soho, London"). */
export const NEAR_KM = 50;
const MAX_NEAR_PLACES = 200;
const CODE = /^[A-Za-z]{2,3}$/;

/**
 * Joins parts that together are one country name with a comma in it ("Korea, Republic of",
 * "Tanzania, United Republic of"): a part that alone names no country, region or place and that,
 * joined to the part before it, names a country.
 */
export function joinCountryNames(lookup: GazetteerLookup, parts: AddressPart[]): AddressPart[] {
  const joined: AddressPart[] = [];
  for (const part of parts) {
    const previous = joined.at(-1);
    if (previous && joined.length > 1 && namesNothing(lookup, part)) {
      const text = `${previous.text}, ${part.text}`;
      const key = placeKey(text);
      if (countriesOf(lookup, key).length > 0) {
        joined[joined.length - 1] = { text, key, near: false };
        continue;
      }
    }
    joined.push(part);
  }
  return joined;
}

/** The countries a key names, with or without the English article ("Russian Federation (the)"). */
function countriesOf(lookup: GazetteerLookup, key: string): readonly string[] {
  const countries = lookup.countries(key);
  return countries.length > 0 || !/\bthe\b/.test(key) ? countries : lookup.countries(withoutArticle(key));
}

function namesNothing(lookup: GazetteerLookup, part: AddressPart): boolean {
  return (
    countriesOf(lookup, part.key).length === 0 &&
    lookup.regions(part.key).length === 0 &&
    lookup.places(part.key).length === 0
  );
}

/** The constraints of the parts after the first, read from the last (the country) backwards. */
export function readConstraints(
  lookup: GazetteerLookup,
  later: readonly AddressPart[],
): (Constraint | UnknownPart)[] {
  const read: (Constraint | UnknownPart)[] = [];
  const named = new Set<string>();
  for (let i = later.length - 1; i >= 0; i--) {
    const part = later[i] as AddressPart;
    const countries = countriesOf(lookup, part.key);
    const regions = lookup.regions(part.key);
    let constraint: Constraint | UnknownPart;
    if (CODE.test(part.text.trim()) && countries.length > 0) {
      const ofNamedCountry = regions.filter((r) => named.has(r.country));
      // A code before a part naming another country is not that country ("Nadi, Ba, Fiji": Ba the
      // province, not Bosnia): a region code of the named country, else a middle part not checked.
      const otherCountry = named.size > 0 && !countries.some((c) => named.has(c));
      constraint = ofNamedCountry.length
        ? { part, countries: [], regions: ofNamedCountry, near: [], usStates: [] }
        : otherCountry
          ? { part, unknown: true }
          : {
              part,
              countries,
              regions: [],
              near: [],
              usStates: part.text.trim().length === 2 ? regions.filter((r) => r.country === 'US') : [],
            };
    } else if (countries.length > 0 || regions.length > 0) {
      constraint = { part, countries, regions, near: [], usStates: [] };
    } else if (i < later.length - 1) {
      // A middle part that names no region or country (a district, a county) is not checked.
      constraint = { part, unknown: true };
    } else {
      const near = lookup
        .places(part.key)
        .slice(0, MAX_NEAR_PLACES)
        .map((m) => m.place);
      constraint = near.length
        ? { part, countries: [], regions: [], near, usStates: [] }
        : { part, unknown: true };
    }
    if ('countries' in constraint) for (const country of constraint.countries) named.add(country);
    read.unshift(constraint);
  }
  return withinNamedCountries(read);
}

/**
 * A region is looked for in the country the address names: "Manchester, Manchester, United Kingdom"
 * does not mean Manchester Parish (Jamaica). A region name the named country does not have cannot be
 * checked, so it constrains nothing (and lowers the confidence as an unknown part).
 */
function withinNamedCountries(read: (Constraint | UnknownPart)[]): (Constraint | UnknownPart)[] {
  const countryOnly = read.filter(
    (c): c is Constraint => 'countries' in c && c.countries.length > 0 && c.regions.length === 0,
  );
  if (countryOnly.length === 0) return read;
  const named = new Set(countryOnly.flatMap((c) => c.countries));
  return read.map((c) => {
    if (!('countries' in c) || (c.countries.length > 0 && c.regions.length === 0) || c.near.length > 0)
      return c;
    const narrowed = {
      ...c,
      countries: c.countries.filter((country) => named.has(country)),
      regions: c.regions.filter((r) => named.has(r.country)),
    };
    return narrowed.countries.length || narrowed.regions.length ? narrowed : { part: c.part, unknown: true };
  });
}

/**
 * The constraints with each region of a named country widened to NEAR_KM around the gazetteer's
 * places of that region (null when the address names no country or no such region): for a place
 * the sources put on either side of a region's border ("Partizánske, Nitra, Slovakia").
 */
export function acrossRegionBorders(
  lookup: GazetteerLookup,
  constraints: readonly Constraint[],
): Constraint[] | null {
  if (!constraints.some((c) => c.countries.length > 0)) return null;
  let widened = false;
  const result = constraints.map((c) => {
    if (c.countries.length > 0 || c.regions.length === 0 || c.near.length > 0) return c;
    widened = true;
    const near = c.regions.flatMap((r) => lookup.regionPlaces(r.country, r.admin1));
    return { ...c, regions: [], near };
  });
  return widened ? result : null;
}

export function kilometres(
  a: { latitude: number; longitude: number },
  b: { latitude: number; longitude: number },
): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 12742 * Math.asin(Math.sqrt(h));
}

export function satisfies(place: GazetteerPlace, constraint: Constraint): boolean {
  return (
    constraint.countries.includes(place.country) ||
    constraint.regions.some((r) => r.country === place.country && r.admin1 === place.admin1) ||
    constraint.near.some((other) => other.country === place.country && kilometres(place, other) <= NEAR_KM)
  );
}

// Words that make a first part a street, square, building or venue inside a town rather than a town
// ("Alexanderplatz", "Calle Mayor 1", "Museum Ludwig"): in German compounds also at a word's end.
const STREET_WORDS = new Set(
  (
    'street st road rd avenue ave av boulevard blvd lane ln drive dr way square sq place pl plaza court ' +
    'strasse str platz gasse weg allee damm ufer markt ring chaussee brucke rue chemin quai impasse via ' +
    'viale piazza corso largo vicolo calle carrera avenida paseo plazuela rua praca travessa straat plein ' +
    'gracht laan kade ulica ul prospekt museum musee museo church kirche cathedral dom station bahnhof ' +
    'airport flughafen park garden garten bridge castle schloss palace palast hall halle arena stadium ' +
    'stadion theatre theater university universitat hospital klinikum school schule centre center tower'
  ).split(' '),
);
const STREET_SUFFIX = /(strasse|platz|gasse|weg|allee|damm|ufer|markt|brucke|straat|gracht|plein)$/;

/** A part that names a street, square, building or venue (or has a house number). */
export function isStreetLike(part: AddressPart): boolean {
  if (/\d/.test(part.key)) return true;
  return part.key.split(' ').some((word) => STREET_WORDS.has(word) || STREET_SUFFIX.test(word));
}

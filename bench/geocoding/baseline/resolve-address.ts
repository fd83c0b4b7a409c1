// The benchmark's baseline (bench/geocoding/run.ts): main's file of the same name at commit 1db5791,
// before issue 33, copied unchanged but for its import paths; it reads the format-7 gazetteer file.

import { type AddressPart, addressParts } from '../../../src/domain/ingest/geocoding/place-key.ts';

// Resolving an address against a gazetteer, without I/O: which part names the place, which parts
// constrain it (a country or a first-level region, by name or code), which candidates satisfy every
// constraint, and how sure the answer is. A named country or region is never overruled: a candidate
// outside it is rejected, not ranked lower. Ambiguity inside the constraints lowers the confidence
// instead of picking one of several equally likely places.

export type GazetteerPlace = {
  name: string;
  country: string;
  admin1: string;
  population: number;
  latitude: number;
  longitude: number;
  featureCode: string;
};

/** A place the gazetteer holds under a name key; `alternate` when it is not the place's main name. */
export type PlaceMatch = { place: GazetteerPlace; alternate: boolean };
export type RegionRef = { country: string; admin1: string };

/** What the resolver needs from a gazetteer: look-ups by normalised key (see placeKey). */
export interface GazetteerLookup {
  places(key: string): readonly PlaceMatch[];
  /** ISO alpha-2 codes of the countries a text names (a name in some language, alpha-2 or alpha-3). */
  countries(key: string): readonly string[];
  /** First-level regions a text names (by name or ISO 3166-2 code). */
  regions(key: string): readonly RegionRef[];
  regionName(country: string, admin1: string): string | null;
}

export type ScoredCandidate = {
  name: string;
  country: string;
  region: string | null;
  latitude: number;
  longitude: number;
  population: number;
  /** The part of the address it was found under. */
  matchedText: string;
  /** Its relative weight: population, kind of place, main or alternate name. */
  score: number;
  /** Why it is not an answer; null for the candidates inside every constraint. */
  rejected: string | null;
};

type Resolved = {
  location: { latitude: number; longitude: number };
  confidence: number;
  matchedName: string;
  matchedCountry: string;
  matchedRegion: string | null;
};

export type Resolution = {
  best: Resolved | null;
  /** Why there is no answer (when best is null). */
  failure: string | null;
  /** Every candidate looked at, best first (bounded: see MAX_CANDIDATES). */
  candidates: ScoredCandidate[];
};

const MAX_CANDIDATES = 50;

// Capitals and regional seats are what an unqualified name usually means; parts of a town (PPLX) and
// historical or abandoned places (PPLH, PPLQ, PPLW) seldom are.
const FEATURE_WEIGHT: Record<string, number> = {
  PPLC: 3,
  PPLA: 2,
  PPLA2: 1.5,
  PPLX: 0.3,
  PPLH: 0.05,
  PPLQ: 0.05,
  PPLW: 0.05,
};

/** Relative weight of a candidate: a big town under its own name beats a hamlet known by the same alias. */
function candidateScore(match: PlaceMatch): number {
  const feature = Object.hasOwn(FEATURE_WEIGHT, match.place.featureCode)
    ? (FEATURE_WEIGHT[match.place.featureCode] ?? 1)
    : 1;
  return (match.place.population + 1000) * feature * (match.alternate ? 0.5 : 1);
}

type Constraint = { part: AddressPart; countries: readonly string[]; regions: readonly RegionRef[] };

function constraintOf(lookup: GazetteerLookup, part: AddressPart): Constraint | null {
  const countries = lookup.countries(part.key);
  const regions = lookup.regions(part.key);
  return countries.length || regions.length ? { part, countries, regions } : null;
}

/**
 * A region is looked for in the country the address names: "Manchester, Manchester, United Kingdom"
 * does not mean Manchester Parish (Jamaica). A region name the named country does not have cannot be
 * checked, so it constrains nothing (and lowers the confidence as an unknown part).
 */
function withinNamedCountries(constraints: Constraint[]): Constraint[] {
  const countryOnly = constraints.filter((c) => c.countries.length > 0 && c.regions.length === 0);
  if (countryOnly.length === 0) return constraints;
  const named = new Set(countryOnly.flatMap((c) => c.countries));
  return constraints
    .map((c) =>
      c.countries.length > 0 && c.regions.length === 0
        ? c
        : {
            ...c,
            countries: c.countries.filter((country) => named.has(country)),
            regions: c.regions.filter((r) => named.has(r.country)),
          },
    )
    .filter((c) => c.countries.length > 0 || c.regions.length > 0);
}

function satisfies(place: GazetteerPlace, constraint: Constraint): boolean {
  return (
    constraint.countries.includes(place.country) ||
    constraint.regions.some((r) => r.country === place.country && r.admin1 === place.admin1)
  );
}

/**
 * Confidence of the best of several candidates inside the constraints: its share of their total
 * weight, times how directly the address named it (the first part, a later part, "12 km N of").
 */
function confidenceOf(bestScore: number, totalScore: number, base: number): number {
  if (totalScore <= 0) return 0;
  return Math.round(base * (bestScore / totalScore) * 1000) / 1000;
}

/** Bounds on what is resolved: the work grows with the square of the parts (a hostile cell). */
export const MAX_RESOLVED_ADDRESS_CHARS = 500;
const MAX_ADDRESS_PARTS = 12;

export function resolveAddress(lookup: GazetteerLookup, address: string): Resolution {
  if (address.length > MAX_RESOLVED_ADDRESS_CHARS)
    return {
      best: null,
      failure: `address longer than ${MAX_RESOLVED_ADDRESS_CHARS} characters`,
      candidates: [],
    };
  const parts = addressParts(address);
  if (parts.length === 0) return { best: null, failure: 'empty address', candidates: [] };
  if (parts.length > MAX_ADDRESS_PARTS)
    return { best: null, failure: `more than ${MAX_ADDRESS_PARTS} comma-separated parts`, candidates: [] };
  const constraints = parts.map((part) => constraintOf(lookup, part));
  const candidates: ScoredCandidate[] = [];
  let rejectedAll = false;
  for (const [position, part] of parts.entries()) {
    // A later part that names a country is a constraint, not the place ("X, Georgia"); one that
    // names a region may be the place ("Calle Mayor 1, Madrid, Spain").
    if (position > 0 && (constraints[position]?.countries.length ?? 0) > 0) continue;
    const matches = lookup.places(part.key);
    if (matches.length === 0) continue;
    const given = constraints.filter((c, i): c is Constraint => c !== null && i !== position);
    const others = withinNamedCountries(given);
    const unknownParts = parts.length - 1 - others.length;
    const inside: ScoredCandidate[] = [];
    for (const match of matches) {
      const failed = others.find((constraint) => !satisfies(match.place, constraint));
      const candidate: ScoredCandidate = {
        name: match.place.name,
        country: match.place.country,
        region: lookup.regionName(match.place.country, match.place.admin1),
        latitude: match.place.latitude,
        longitude: match.place.longitude,
        population: match.place.population,
        matchedText: part.text,
        score: Math.round(candidateScore(match)),
        rejected: failed ? `outside "${failed.part.text}"` : null,
      };
      candidates.push(candidate);
      if (!failed) inside.push(candidate);
    }
    if (inside.length === 0) {
      rejectedAll = true;
      continue;
    }
    inside.sort((a, b) => b.score - a.score);
    const best = inside[0] as ScoredCandidate;
    const total = inside.reduce((sum, c) => sum + c.score, 0);
    // "145 km E of Hihifo" is near Hihifo, not in it; a later part is a less direct answer, and one
    // that also names a region ("X, Madrid, Spain") may mean the region rather than its town, so it
    // stays under the default threshold; a part that names nothing known could not be checked.
    const direct = position === 0 && !part.near ? 0.95 : 0.75;
    const base = (position > 0 && constraints[position] !== null ? 0.45 : direct) * 0.95 ** unknownParts;
    candidates.sort(byAcceptedThenScore);
    if (best.latitude === 0 && best.longitude === 0)
      return { best: null, failure: 'resolved to (0,0)', candidates: bounded(candidates) };
    return {
      best: {
        location: { latitude: best.latitude, longitude: best.longitude },
        confidence: confidenceOf(best.score, total, base),
        matchedName: best.name,
        matchedCountry: best.country,
        matchedRegion: best.region,
      },
      failure: null,
      candidates: bounded(candidates),
    };
  }
  candidates.sort(byAcceptedThenScore);
  return {
    best: null,
    failure: rejectedAll ? 'no matching place inside the given country or region' : 'no matching place',
    candidates: bounded(candidates),
  };
}

function byAcceptedThenScore(a: ScoredCandidate, b: ScoredCandidate): number {
  return Number(a.rejected !== null) - Number(b.rejected !== null) || b.score - a.score;
}

function bounded(candidates: ScoredCandidate[]): ScoredCandidate[] {
  return candidates.slice(0, MAX_CANDIDATES);
}

import {
  acrossRegionBorders,
  type Constraint,
  isStreetLike,
  joinCountryNames,
  kilometres,
  NEAR_KM,
  readConstraints,
  satisfies,
} from './address-constraints.ts';
import type { GazetteerLookup, PlaceMatch } from './gazetteer-lookup.ts';
import { type AddressPart, addressParts } from './place-key.ts';
import { spellingMatches } from './spelling.ts';

export type { GazetteerLookup, GazetteerPlace, PlaceMatch, RegionRef } from './gazetteer-lookup.ts';

// Resolving an address against a gazetteer, without I/O: which part names the place, which parts
// constrain it (a country or a first-level region, by name or code), which candidates satisfy every
// constraint, and how sure the answer is. A named country or region is never overruled: a candidate
// outside it is rejected, not ranked lower. Ambiguity inside the constraints lowers the confidence
// instead of picking one of several equally likely places.

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

/** How exactly the answer places the address: the town named, a street or venue inside it, or a region. */
type Precision = 'city' | 'locality' | 'region';

type Resolved = {
  location: { latitude: number; longitude: number };
  confidence: number;
  matchedName: string;
  matchedCountry: string;
  matchedRegion: string | null;
  precision: Precision;
  /** Distinct places inside every constraint (places within NEAR_KM of the answer counted as one). */
  candidateCount: number;
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

/**
 * The dominance rule: the best candidate is the answer only when it weighs at least DOMINANCE times
 * all the other places of the name inside the constraints (more than NEAR_KM away) together, and,
 * unless it is a capital or first-level seat (PPLC, PPLA), none of them is an administrative seat of
 * unknown population (GeoNames' 0, which cannot be compared) known by that very name (a seat that
 * only has it among its alternate names, "Taitung" for "Taichung", is weighed, not feared). Otherwise the address is ambiguous
 * and its confidence at most AMBIGUOUS_CONFIDENCE.
 */
const DOMINANCE = 10;
/** A town this large, under its main name, outweighs a seat of unknown population (seldom a large town). */
const KNOWN_LARGE = 100_000;
/** A rival known by the name only as an alternate name, against a place whose main name it is. */
const ALTERNATE_RIVAL = 0.2;
/** A place found just across the border of the named region (see acrossRegionBorders). */
const BORDER_FACTOR = 0.9;
/** A name without a country or region: one place of it weighs this many times the others together. */
const WORLD_DOMINANCE = 2;
/** Under the default threshold (0.5): an ambiguous address is never placed by default. */
export const AMBIGUOUS_CONFIDENCE = 0.45;
/** A street, square or venue in a town: the town's confidence, times this (a less direct answer). */
const LOCALITY_FACTOR = 0.75;

/** A place found under another spelling (spelling.ts): its confidence times this. */
const SPELLING_FACTOR = 0.8;
/** A place found only in the supplement (the newer extract): its confidence times this. */
const SUPPLEMENT_FACTOR = 0.8;
/** The spelling search reads every name of a country: not for an address that names many. */
const MAX_SPELLING_COUNTRIES = 3;

/** Bounds on what is resolved: the work grows with the square of the parts (a hostile cell). */
export const MAX_RESOLVED_ADDRESS_CHARS = 500;
const MAX_ADDRESS_PARTS = 12;

type Inside = { candidate: ScoredCandidate; match: PlaceMatch };

/** The US state rule's reading of the constraints: the two-letter code as a US state, not a country. */
function asUsState(constraints: Constraint[], code: Constraint): Constraint[] {
  const asState: Constraint = { ...code, countries: [], usStates: [], regions: code.usStates };
  return constraints.map((c) => (c === code ? asState : c));
}

export function resolveAddress(lookup: GazetteerLookup, address: string): Resolution {
  if (address.length > MAX_RESOLVED_ADDRESS_CHARS)
    return {
      best: null,
      failure: `address longer than ${MAX_RESOLVED_ADDRESS_CHARS} characters`,
      candidates: [],
    };
  const split = addressParts(address);
  if (split.length === 0) return { best: null, failure: 'empty address', candidates: [] };
  if (split.length > MAX_ADDRESS_PARTS)
    return { best: null, failure: `more than ${MAX_ADDRESS_PARTS} comma-separated parts`, candidates: [] };
  return resolveParts(lookup, joinCountryNames(lookup, split));
}

function resolveParts(lookup: GazetteerLookup, parts: AddressPart[]): Resolution {
  const [first, ...later] = parts as [AddressPart, ...AddressPart[]];
  const read = readConstraints(lookup, later);
  const last = read.at(-1);
  // The last part is where the address says it is: a country, region or place it does not know is
  // not dropped for a world-wide search.
  if (last && 'unknown' in last)
    return {
      best: null,
      failure: `"${last.part.text}" is not a known country, region or place`,
      candidates: [],
    };
  const constraints = read.filter((c): c is Constraint => 'countries' in c);
  const unknownParts = read.length - constraints.length;
  const matches = lookup.places(first.key);
  let search = searchInside(lookup, first, matches, constraints);
  // The US state rule: "Helena, MT" is in Montana because Malta has no Helena.
  let codeCountries: readonly string[] = [];
  const code = constraints.find((c) => c.usStates.length > 0);
  if (search.inside.length === 0 && code) {
    const retried = searchInside(lookup, first, matches, asUsState(constraints, code));
    if (retried.inside.length > 0) {
      search = retried;
      codeCountries = code.countries;
    }
  }
  // The region border rule: regions are drawn differently by different sources (and redrawn), so
  // when no place of the name lies in the named region, one of the named country within NEAR_KM of
  // a place of that region is taken, its confidence times BORDER_FACTOR.
  let border = 1;
  if (search.inside.length === 0 && matches.length > 0) {
    const widened = acrossRegionBorders(lookup, constraints);
    const retried = widened ? searchInside(lookup, first, matches, widened) : null;
    if (retried && retried.inside.length > 0) {
      search = retried;
      border = BORDER_FACTOR;
    }
  }
  // The supplement rule: a town the main gazetteer does not hold inside the constraints is looked
  // for among the newer extract's places (gazetteer-lookup.ts), under its exact name only and
  // inside the same constraints; known by one name and no population, each weighs the same, so two
  // of the name more than NEAR_KM apart are ambiguous. For a name alone too (tuned on the tune half:
  // recall of the city alone 78.5 → 84.3 %, far off 3.6 → 3.3 %).
  let supplement = 1;
  if (search.inside.length === 0 && !isStreetLike(first)) {
    const newer = lookup.supplementPlaces(first.key);
    let retried = searchInside(lookup, first, newer, constraints);
    // The US state rule among them too: "Zortman, MT" when only the newer extract holds Zortman.
    if (retried.inside.length === 0 && code && newer.length > 0) {
      const inState = searchInside(lookup, first, newer, asUsState(constraints, code));
      if (inState.inside.length > 0) {
        retried = inState;
        codeCountries = code.countries;
      }
    }
    if (retried.inside.length > 0) {
      search = { inside: retried.inside, candidates: [...retried.candidates, ...search.candidates] };
      supplement = SUPPLEMENT_FACTOR;
    }
  }
  // The spelling rule (spelling.ts): a name with no place inside the named country is looked for
  // under other spellings among that country's places only, never world-wide nor for a street.
  let spelling = 1;
  let tentativeSpelling = false;
  const countries = namedCountries(constraints);
  if (search.inside.length === 0 && countries.length > 0 && !isStreetLike(first)) {
    const found = spellingMatches(lookup, first.key, countries);
    const retried = found ? searchInside(lookup, first, found.matches, constraints) : null;
    if (found && retried && retried.inside.length > 0) {
      search = retried;
      spelling = SPELLING_FACTOR;
      // Tuned on the tune half: GeoNames' alternate names are noisier than its main names ("Hasan
      // Abdal" is also an alternate name of a village 378 km away), and an edited spelling among a
      // country's thousands of names finds some town too often ("Harima" found Hashima, 179 km off).
      tentativeSpelling = found.distance > 0 || retried.inside.every((c) => c.match.alternate);
    }
  }
  if (search.inside.length === 0) {
    if (matches.length > 0)
      return {
        best: null,
        failure: 'no matching place inside the given country or region',
        candidates: bounded(search.candidates.sort(byAcceptedThenScore)),
      };
    return locality(lookup, first, later);
  }
  const direct = first.near ? 0.75 : 0.95;
  const resolved = answer(
    search.inside,
    direct * border * spelling * supplement * 0.95 ** unknownParts,
    constraints.length > 0 ? DOMINANCE : WORLD_DOMINANCE,
  );
  // An edited spelling, or one found only among alternate names: a candidate, not placed by default.
  if (tentativeSpelling) resolved.confidence = Math.min(resolved.confidence, AMBIGUOUS_CONFIDENCE);
  // "Malta, MT": the country Malta itself and the town in Montana both fit.
  if (lookup.countries(first.key).some((c) => codeCountries.includes(c)))
    resolved.confidence = Math.min(resolved.confidence, AMBIGUOUS_CONFIDENCE);
  const candidates = bounded(search.candidates.sort(byAcceptedThenScore));
  if (resolved.location.latitude === 0 && resolved.location.longitude === 0)
    return { best: null, failure: 'resolved to (0,0)', candidates };
  return { best: resolved, failure: null, candidates };
}

/** The countries the constraints name, or else those of the regions they name (at most a few). */
function namedCountries(constraints: readonly Constraint[]): string[] {
  const named = new Set(constraints.flatMap((c) => c.countries));
  if (named.size === 0) for (const c of constraints) for (const r of c.regions) named.add(r.country);
  return named.size <= MAX_SPELLING_COUNTRIES ? [...named] : [];
}

function searchInside(
  lookup: GazetteerLookup,
  part: AddressPart,
  matches: readonly PlaceMatch[],
  constraints: readonly Constraint[],
): { inside: Inside[]; candidates: ScoredCandidate[] } {
  const inside: Inside[] = [];
  const candidates: ScoredCandidate[] = [];
  for (const match of matches) {
    const failed = constraints.find((constraint) => !satisfies(match.place, constraint));
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
    if (!failed) inside.push({ candidate, match });
  }
  return { inside, candidates };
}

/** The best candidate inside the constraints, its confidence by its share and the dominance rule. */
function answer(inside: Inside[], base: number, dominance: number): Resolved {
  inside.sort((a, b) => b.candidate.score - a.candidate.score);
  const best = inside[0] as Inside;
  const rivals = inside.filter((c) => c !== best && kilometres(c.candidate, best.candidate) > NEAR_KM);
  // Against a place known by the name as its main name, one that only has it among its alternate
  // names ("Kolonia" for "Colonia") weighs ALTERNATE_RIVAL of its score.
  const weight = (c: Inside) =>
    c.candidate.score * (!best.match.alternate && c.match.alternate ? ALTERNATE_RIVAL : 1);
  const rivalScore = rivals.reduce((sum, c) => sum + weight(c), 0);
  const unknownSeat =
    !/^PPL(A|C)$/.test(best.match.place.featureCode) &&
    (best.match.alternate || best.match.place.population < KNOWN_LARGE) &&
    rivals.some((c) => c.match.place.population === 0 && /^PPL(A|A2|C)$/.test(c.match.place.featureCode));
  const share = best.candidate.score / (best.candidate.score + rivalScore);
  let confidence = Math.round(base * share * 1000) / 1000;
  if (unknownSeat || best.candidate.score < dominance * rivalScore)
    confidence = Math.min(confidence, AMBIGUOUS_CONFIDENCE);
  return {
    location: { latitude: best.candidate.latitude, longitude: best.candidate.longitude },
    confidence,
    matchedName: best.candidate.name,
    matchedCountry: best.candidate.country,
    matchedRegion: best.candidate.region,
    precision: 'city',
    candidateCount: 1 + rivals.length,
  };
}

/**
 * A first part that names no place: a street, square or venue inside the town the next part names
 * is that town at precision `locality`, with the town's confidence times LOCALITY_FACTOR; anything
 * else is not found, never replaced by a place a later part names ("Xyzzyville, Atlantis").
 */
function locality(lookup: GazetteerLookup, first: AddressPart, later: AddressPart[]): Resolution {
  const next = later[0];
  const town = next && isStreetLike(first) && !first.near ? resolveParts(lookup, later) : null;
  if (!town?.best)
    return {
      best: null,
      failure:
        later.length === 0
          ? 'no matching place'
          : `no matching place: "${first.text}" is not a known place${town?.failure ? ` (${town.failure})` : ''}`,
      candidates: town?.candidates ?? [],
    };
  return {
    ...town,
    best: {
      ...town.best,
      precision: 'locality',
      confidence: Math.round(town.best.confidence * LOCALITY_FACTOR * 1000) / 1000,
    },
  };
}

function byAcceptedThenScore(a: ScoredCandidate, b: ScoredCandidate): number {
  return Number(a.rejected !== null) - Number(b.rejected !== null) || b.score - a.score;
}

function bounded(candidates: ScoredCandidate[]): ScoredCandidate[] {
  return candidates.slice(0, MAX_CANDIDATES);
}

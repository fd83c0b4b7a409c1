import type { CountryNames, GazetteerLookup, PlaceMatch } from './gazetteer-lookup.ts';

// Spelling-tolerant matching inside a named country (issue 33): a town the gazetteer holds under
// another transliteration or spelling ("Kashkar-Kyshtak" / "Kashkar Kyshtak", "Imouzzer Kandar" /
// "Imouzzer Kander") is looked for only among the places of the country the address names, and
// only when no place of the exact name is there, so a spelling never moves an address to another
// country nor replaces a place that exists. Two tiers: the same name once transliteration variants
// are folded, and a bounded edit distance between the folded names; each lowers the confidence
// (resolve-address.ts, SPELLING_FACTOR).

/** The edit distance allowed between folded names, by the folded name's length. */
export function allowedDistance(length: number): number {
  if (length < 6) return 0;
  return length < 10 ? 1 : 2;
}

// Letter groups that transliterations of one name write differently (French, English, German and
// Spanish conventions for Arabic, Slavic, Turkic, Korean names...), each folded to one spelling.
const FOLDS: [RegExp, string][] = [
  [/\b(village|town|city)\b/g, ''],
  [/[\s-]+/g, ''],
  [/kh/g, 'h'],
  [/ou/g, 'u'],
  [/oo/g, 'u'],
  [/ee/g, 'i'],
  [/ph/g, 'f'],
  [/([bcdfgkprstz])h/g, '$1'],
  [/ck|q|c/g, 'k'],
  [/[yj]/g, 'i'],
  [/w/g, 'v'],
  [/z/g, 's'],
  [/(.)\1+/g, '$1'],
  [/h$/, ''],
];

/** A name key with transliteration variants folded: "kashkar kyshtak" and "kaschkar-kischtak" meet. */
export function spellingFold(key: string): string {
  let folded = key;
  for (const [pattern, replacement] of FOLDS) folded = folded.replace(pattern, replacement);
  return folded;
}

/** A country's names with their folded spellings (a gazetteer folds them once, when it is built). */
export function countryNamesOf(keys: readonly string[]): CountryNames {
  return { keys, folded: keys.map(spellingFold) };
}

// Three rows of the distance table, reused: the search compares thousands of names per address.
let rows: [Int32Array, Int32Array, Int32Array] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * The Damerau (adjacent transposition) edit distance of a and b, or max + 1 once it exceeds max.
 * Only the band of cells within max of the diagonal is computed (the others exceed max anyway).
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (rows[0].length <= b.length) rows = [0, 1, 2].map(() => new Int32Array(b.length * 2 + 1)) as typeof rows;
  const over = max + 1;
  let [before, previous, current] = rows;
  for (let j = 0; j <= b.length; j++) previous[j] = j <= max ? j : over;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - max);
    const to = Math.min(b.length, i + max);
    current[0] = i <= max ? i : over;
    if (from > 1) current[from - 1] = over;
    let rowMin = current[0]!; // column 0 (i deletions): over max once i is
    for (let j = from; j <= to; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, before[j - 2]! + 1);
      current[j] = Math.min(value, over);
      rowMin = Math.min(rowMin, current[j]!);
    }
    if (to < b.length) current[to + 1] = over;
    if (rowMin > max) return over;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length]!, over);
}

// A country's name keys by folded spelling, and by the folded spelling's first letter and length
// (an edit is looked for only among names of the same first letter and a length within the bound:
// a scan of the whole country per address cost 7 times the resolver's time), built once per list
// the gazetteer hands out, from the folded spellings it holds (folding a large country's names took
// about 0.3 s at its first spelling search).
type FoldedIndex = { byFold: Map<string, string[]>; byShape: Map<string, [string, string][]> };
const foldedIndexes = new WeakMap<CountryNames, FoldedIndex>();

function foldedIndex(names: CountryNames): FoldedIndex {
  let index = foldedIndexes.get(names);
  if (!index) {
    index = { byFold: new Map(), byShape: new Map() };
    for (let i = 0; i < names.keys.length; i++) {
      const key = names.keys[i] as string;
      const folded = names.folded[i] as string;
      const same = index.byFold.get(folded);
      if (same) same.push(key);
      else index.byFold.set(folded, [key]);
      const shape = shapeOf(folded.charAt(0), folded.length);
      const bucket = index.byShape.get(shape);
      if (bucket) bucket.push([folded, key]);
      else index.byShape.set(shape, [[folded, key]]);
    }
    foldedIndexes.set(names, index);
  }
  return index;
}

const shapeOf = (initial: string, length: number) => `${initial}${length}`;

type SpellingMatch = { matches: PlaceMatch[]; distance: number };

/**
 * The places of `countries` whose name, folded, equals the folded key or else lies within
 * allowedDistance of it (same first letter), the nearest spellings only; null when there is none.
 */
export function spellingMatches(
  lookup: GazetteerLookup,
  key: string,
  countries: readonly string[],
): SpellingMatch | null {
  const target = spellingFold(key);
  if (target.length < 4) return null;
  const indexes = countries.map((country) => foldedIndex(lookup.countryNames(country)));
  let keys = indexes.flatMap((index) => index.byFold.get(target) ?? []);
  let best = 0;
  if (keys.length === 0) {
    const max = allowedDistance(target.length);
    best = max + 1;
    const shapes: string[] = [];
    for (let length = target.length - max; length <= target.length + max; length++)
      shapes.push(shapeOf(target.charAt(0), length));
    for (const index of indexes)
      for (const [folded, found] of shapes.flatMap((shape) => index.byShape.get(shape) ?? [])) {
        if (Math.abs(folded.length - target.length) > Math.min(max, best)) continue;
        const distance = editDistance(folded, target, Math.min(max, best));
        if (distance > max || distance > best) continue;
        if (distance < best) {
          best = distance;
          keys = [];
        }
        keys.push(found);
      }
  }
  if (keys.length === 0) return null;
  const inCountry = new Set(countries);
  // A place may be found under several of its names: listed once.
  const seen = new Set<string>();
  const matches: PlaceMatch[] = [];
  for (const found of keys)
    for (const match of lookup.places(found)) {
      const id = `${match.place.country}|${match.place.latitude}|${match.place.longitude}|${match.place.name}`;
      if (!inCountry.has(match.place.country) || seen.has(id)) continue;
      seen.add(id);
      matches.push(match);
    }
  return matches.length > 0 ? { matches, distance: best } : null;
}

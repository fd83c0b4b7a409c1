import { placeKey } from '../../domain/ingest/geocoding/place-key.ts';

// Pairing ISO 3166-2 subdivisions with GeoNames' first-level regions by spelling, for the regions
// whose names differ between the two sources (Thüringen/Thuringia, Bayern/Bavaria): used while the
// gazetteer is built (gazetteer-data.ts, loadRegions).

function bigrams(text: string): string[] {
  const key = placeKey(text).replace(/ /g, '');
  const grams: string[] = [];
  for (let i = 0; i + 1 < key.length; i++) grams.push(key.slice(i, i + 2));
  return grams;
}

/** How alike two spellings are: shared letter pairs (Dice), plus a shared beginning of 3 letters or more. */
function spellingLikeness(a: string, b: string): number {
  const ga = bigrams(a);
  const gb = bigrams(b);
  if (ga.length === 0 || gb.length === 0) return 0;
  const pool = [...gb];
  let shared = 0;
  for (const gram of ga) {
    const at = pool.indexOf(gram);
    if (at >= 0) {
      shared++;
      pool.splice(at, 1);
    }
  }
  const ka = placeKey(a);
  const kb = placeKey(b);
  let prefix = 0;
  while (prefix < ka.length && ka[prefix] === kb[prefix]) prefix++;
  return (2 * shared) / (ga.length + gb.length) + (prefix >= 3 ? 0.2 : 0);
}

export const SPELLING_PAIR_MINIMUM = 0.75;

export function pairBySpelling(
  isoSubdivisions: [string, string, string][],
  admin1: Map<string, string>,
  minimum: number,
): [string, string, string][] {
  const pairs: { code: string; name: string; admin1: string; likeness: number }[] = [];
  for (const [code, name] of isoSubdivisions)
    for (const [admin1Code, admin1Name] of admin1) {
      const likeness = spellingLikeness(name, admin1Name);
      if (likeness >= minimum) pairs.push({ code, name, admin1: admin1Code, likeness });
    }
  pairs.sort((a, b) => b.likeness - a.likeness);
  const usedIso = new Set<string>();
  const usedAdmin1 = new Set<string>();
  const chosen: [string, string, string][] = [];
  for (const pair of pairs) {
    if (usedIso.has(pair.code) || usedAdmin1.has(pair.admin1)) continue;
    usedIso.add(pair.code);
    usedAdmin1.add(pair.admin1);
    chosen.push([pair.code, pair.name, pair.admin1]);
  }
  return chosen;
}

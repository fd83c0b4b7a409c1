// What the address resolver (resolve-address.ts) reads from a gazetteer: look-ups by normalised key.

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
/** A country's name keys and, at the same positions, their folded spellings (spelling.ts). */
export type CountryNames = { keys: readonly string[]; folded: readonly string[] };

/** What the resolver needs from a gazetteer: look-ups by normalised key (see placeKey). */
export interface GazetteerLookup {
  places(key: string): readonly PlaceMatch[];
  /**
   * Places of a newer GeoNames extract that the main gazetteer does not hold (no population, no
   * alternate names): looked up only when the main gazetteer has no place of the name inside the
   * address's constraints (resolve-address.ts, the supplement rule).
   */
  supplementPlaces(key: string): readonly PlaceMatch[];
  /** ISO alpha-2 codes of the countries a text names (a name in some language, alpha-2 or alpha-3). */
  countries(key: string): readonly string[];
  /** First-level regions a text names (by name or ISO 3166-2 code). */
  regions(key: string): readonly RegionRef[];
  regionName(country: string, admin1: string): string | null;
  /** The places of a first-level region: where the gazetteer knows it to lie. */
  regionPlaces(country: string, admin1: string): readonly GazetteerPlace[];
  /** Every name key of the places of a country, folded too (the same object each call: spelling.ts caches by it). */
  countryNames(country: string): CountryNames;
}

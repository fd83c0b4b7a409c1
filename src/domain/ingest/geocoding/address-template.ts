// An address from several columns: `fieldMapping.address` names one column ("place"), several
// (["city", "region", "country"], joined with commas, empty ones left out) or a template
// ("{city}, {region}, {country}", a column name in braces is its value). The preview proposes the
// columns when it sees city-, region- and country-like columns.

type AddressSpec = string | readonly string[];

/** A spec compiled against a header: literal text and column positions (-1: not in the file). */
export type AddressPlan = { pieces: (string | number)[]; columns: number[] };

export const MAX_ADDRESS_COLUMNS = 8;
export const MAX_ADDRESS_TEMPLATE_CHARS = 300;
const PLACEHOLDER = /\{([^{}]{1,200})\}/g;

export function isAddressTemplate(spec: AddressSpec): spec is string {
  return typeof spec === 'string' && /\{[^{}]+\}/.test(spec);
}

/** The columns a spec reads. */
export function addressColumns(spec: AddressSpec): string[] {
  if (typeof spec !== 'string') return [...spec];
  if (!isAddressTemplate(spec)) return [spec];
  return [...spec.matchAll(PLACEHOLDER)].map((m) => m[1] as string);
}

export function compileAddress(spec: AddressSpec, headers: readonly string[]): AddressPlan {
  const at = (name: string) => headers.indexOf(name);
  if (typeof spec !== 'string') {
    const pieces: (string | number)[] = [];
    spec.forEach((column, i) => {
      if (i > 0) pieces.push(', ');
      pieces.push(at(column));
    });
    return { pieces, columns: spec.map(at) };
  }
  if (!isAddressTemplate(spec)) return { pieces: [at(spec)], columns: [at(spec)] };
  const pieces: (string | number)[] = [];
  let last = 0;
  for (const match of spec.matchAll(PLACEHOLDER)) {
    if (match.index > last) pieces.push(spec.slice(last, match.index));
    pieces.push(at(match[1] as string));
    last = match.index + match[0].length;
  }
  if (last < spec.length) pieces.push(spec.slice(last));
  return { pieces, columns: pieces.filter((p): p is number => typeof p === 'number') };
}

/**
 * A row's address: the pieces filled in, then the comma-separated parts that came out empty dropped
 * ("Köln, , Germany" is "Köln, Germany"); '' when no column had a value.
 */
export function composeAddress(plan: AddressPlan, values: readonly string[]): string {
  let filled = false;
  let text = '';
  for (const piece of plan.pieces) {
    if (typeof piece === 'string') text += piece;
    else {
      const value = piece >= 0 ? (values[piece] ?? '').trim() : '';
      if (value) filled = true;
      text += value;
    }
  }
  if (!filled) return '';
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .join(', ');
}

const CITY_HINTS = [
  'city',
  'town',
  'village',
  'locality',
  'municipality',
  'place',
  'place_name',
  'stadt',
  'ort',
  'ville',
  'ciudad',
  'citta',
  'città',
  'cidade',
  'gemeinde',
  'город',
];
const REGION_HINTS = [
  'region',
  'state',
  'province',
  'county',
  'admin1',
  'state_province',
  'bundesland',
  'provincia',
  'estado',
  'région',
  'regione',
  'provinz',
  'kanton',
  'canton',
  'oblast',
  'область',
];
const COUNTRY_HINTS = [
  'country',
  'country_code',
  'countrycode',
  'country_name',
  'nation',
  'land',
  'staat',
  'pays',
  'país',
  'pais',
  'paese',
  'iso2',
  'iso3',
  'cc',
  'страна',
];

/**
 * City-, region- and country-like columns as an address ("Cologne, NRW, Germany"), when there is a
 * city column and at least one of the others; null otherwise.
 */
export function proposeAddressColumns(headers: readonly string[]): string[] | null {
  // As schema detection compares column names: "Country Code" is country_code.
  const normalised = headers.map((name) =>
    name
      .trim()
      .toLowerCase()
      .replace(/[\s-]+/g, '_'),
  );
  const find = (hints: string[]) => {
    for (const hint of hints) {
      const index = normalised.indexOf(hint);
      if (index >= 0) return headers[index];
    }
    return undefined;
  };
  const city = find(CITY_HINTS);
  const region = find(REGION_HINTS);
  const country = find(COUNTRY_HINTS);
  if (!city || (!region && !country)) return null;
  return [city, region, country].filter((c): c is string => c !== undefined);
}

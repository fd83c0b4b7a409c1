// How names are compared: what people write ("São Paulo", "Sao-Paulo", "SAO PAULO") meets the
// gazetteer's spelling under one key.

const PLAIN_ASCII = /^[\x20-\x7e]*$/;
const ASCII_PUNCTUATION = /[^a-z0-9]+/g;

/** Lower case, accents and punctuation removed: "São Paulo" and "Sao-Paulo" meet. */
export function placeKey(text: string): string {
  // Most names are plain ASCII: no decomposition needed (a third of the gazetteer's build time).
  if (PLAIN_ASCII.test(text)) return text.toLowerCase().replace(ASCII_PUNCTUATION, ' ').trim();
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/[łŁ]/g, 'l')
    .replace(/[øØ]/g, 'o')
    .replace(/[đĐ]/g, 'd')
    .replace(/[æÆ]/g, 'ae')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** A name key without the English article: "russian federation the" → "russian federation". */
export function withoutArticle(key: string): string {
  return key
    .replace(/\bthe\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

// "92 km ENE of Chignik, Alaska" (USGS style): the place is what follows "of".
const DISTANCE_PREFIX = /^\s*\d+(?:[.,]\d+)?\s*(?:km|mi|m)\s+[nesw]{0,3}\s*(?:of|von|de|du)\s+/i;

export type AddressPart = { text: string; key: string; near: boolean };

/** The comma-, semicolon- or line-separated parts of an address, most specific first. */
export function addressParts(address: string): AddressPart[] {
  const parts: AddressPart[] = [];
  for (const piece of address.split(/[,;\n]/)) {
    const raw = piece.trim();
    if (!raw) continue;
    const near = DISTANCE_PREFIX.test(raw);
    const key = placeKey(raw.replace(DISTANCE_PREFIX, ''));
    if (key) parts.push({ text: raw, key, near });
  }
  return parts;
}

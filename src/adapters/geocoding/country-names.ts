// ISO 3166-1 English short names that the i18n-iso-countries locale files leave out (the ISO and UN
// style with a qualifier in parentheses or after a comma), and names people write that they also
// lack. Each constrains like any other name of the country (gazetteer-data.ts, loadCountries), which
// also adds every name's forms without its parentheses and with its comma-separated halves swapped.
export const EXTRA_COUNTRY_NAMES: readonly (readonly [string, string])[] = [
  ['Bolivia (Plurinational State of)', 'BO'],
  ['Bonaire, Sint Eustatius and Saba', 'BQ'],
  ['Congo (Democratic Republic of the)', 'CD'],
  ['Congo, Democratic Republic of the', 'CD'],
  ['Falkland Islands (Malvinas)', 'FK'],
  ['Iran (Islamic Republic of)', 'IR'],
  ["Korea (Democratic People's Republic of)", 'KP'],
  ["Korea, Democratic People's Republic of", 'KP'],
  ['Korea (Republic of)', 'KR'],
  ["Lao People's Democratic Republic", 'LA'],
  ['Micronesia (Federated States of)', 'FM'],
  ['Moldova (Republic of)', 'MD'],
  ['Netherlands (Kingdom of the)', 'NL'],
  ['North Macedonia (Republic of)', 'MK'],
  ['Macedonia (the former Yugoslav Republic of)', 'MK'],
  ['Palestine, State of', 'PS'],
  ['Saint Helena, Ascension and Tristan da Cunha', 'SH'],
  ['Saint Martin (French part)', 'MF'],
  ['Sint Maarten (Dutch part)', 'SX'],
  ['Taiwan, Province of China', 'TW'],
  ['Tanzania, United Republic of', 'TZ'],
  ['United Kingdom of Great Britain and Northern Ireland', 'GB'],
  ['United States of America', 'US'],
  ['Venezuela (Bolivarian Republic of)', 'VE'],
  ['Virgin Islands (British)', 'VG'],
  ['Virgin Islands (U.S.)', 'VI'],
  ['Viet Nam', 'VN'],
  ['Türkiye', 'TR'],
  ['Great Britain', 'GB'],
  ['England', 'GB'],
  ['Scotland', 'GB'],
  ['Wales', 'GB'],
  ['Northern Ireland', 'GB'],
  ['Holland', 'NL'],
  ['Czech Republic', 'CZ'],
  ['Russia', 'RU'],
  ['South Korea', 'KR'],
  ['North Korea', 'KP'],
  ['Vietnam', 'VN'],
  ['Ivory Coast', 'CI'],
  ['Burma', 'MM'],
  // Kosovo's user-assigned codes: GeoNames and i18n-iso-countries use XK and XKK, others XKX or XKS.
  ['XKX', 'XK'],
  ['XKS', 'XK'],
];

/**
 * The forms of one country name people write: as given, without a parenthesised qualifier
 * ("Iran (Islamic Republic of)" → "Iran"), with the qualifier in front ("Islamic Republic of Iran"),
 * and a comma-separated qualifier likewise ("Korea, Republic of" → "Republic of Korea").
 */
export function countryNameForms(name: string): string[] {
  const forms = [name];
  const parenthesised = /^(.+?)\s*\((.+)\)\s*$/.exec(name);
  const qualified = /^([^,]+),\s*(.+)$/.exec(name);
  for (const match of [parenthesised, qualified]) {
    if (!match) continue;
    const [, base = '', qualifier = ''] = match;
    forms.push(`${qualifier} ${base}`);
    // "Korea, Republic of" is not only Korea, but "Bonaire, Sint Eustatius and Saba" names Bonaire.
    if (match === parenthesised || !/\bof( the)?$/i.test(qualifier)) forms.push(base);
  }
  return forms;
}

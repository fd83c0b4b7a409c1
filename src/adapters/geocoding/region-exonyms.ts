// First-level regions whose ISO 3166-2 (local) name and GeoNames (English) name share too little
// spelling to be paired automatically (see gazetteer-data.ts, loadRegions): the local name → the
// English one, for the countries whose regions people most often write in either language.
export const REGION_EXONYMS: Record<string, Record<string, string>> = {
  DE: {
    Bayern: 'Bavaria',
    Sachsen: 'Saxony',
    Niedersachsen: 'Lower Saxony',
    Hessen: 'Hesse',
    'Nordrhein-Westfalen': 'North Rhine-Westphalia',
    'Sachsen-Anhalt': 'Saxony-Anhalt',
    Thüringen: 'Thuringia',
  },
  AT: {
    Steiermark: 'Styria',
    Oberösterreich: 'Upper Austria',
    Niederösterreich: 'Lower Austria',
    Kärnten: 'Carinthia',
    Tirol: 'Tyrol',
    Wien: 'Vienna',
  },
  IT: {
    Lombardia: 'Lombardy',
    Toscana: 'Tuscany',
    Piemonte: 'Piedmont',
    Sicilia: 'Sicily',
    Sardegna: 'Sardinia',
    Puglia: 'Apulia',
  },
  ES: {
    Andalucía: 'Andalusia',
    Catalunya: 'Catalonia',
    'País Vasco': 'Basque Country',
    'Castilla y León': 'Castille and León',
  },
};

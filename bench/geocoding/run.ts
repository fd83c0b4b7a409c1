// Geocoding quality and speed on the evaluation cases of cases.ts (issue 33), for this branch's
// offline gazetteer and, as the same run's baseline, main's resolver before issue 33 (a copy in
// bench/geocoding/baseline/, reading its own format-7 gazetteer file):
//
//   npx node bench/geocoding/run.ts            # the held-out half (the figures of record)
//   npx node bench/geocoding/run.ts tune       # the half the rules were tuned on
//
// Per form: located (answers at or over the 0.5 threshold), within 50 km and more than 500 km off
// (of the located), recall (located within 50 km, of all cases); for made-up names the number placed;
// for in-country ambiguity the share placed with normal confidence. Then the goals of issue 33 and
// distinct addresses/s, load time and RSS after load (each geocoder loaded in a fresh process).

import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { gazetteerIndex } from '../../src/adapters/geocoding/gazetteer-data.ts';
import { kilometres } from '../../src/domain/ingest/geocoding/address-constraints.ts';
import { DEFAULT_MIN_CONFIDENCE } from '../../src/domain/ingest/geocoding/confidence.ts';
import { resolveAddress } from '../../src/domain/ingest/geocoding/resolve-address.ts';
import { gazetteerIndex as baselineIndex } from './baseline/gazetteer-data.ts';
import { resolveAddress as baselineResolve } from './baseline/resolve-address.ts';
import { type Case, evaluationCases } from './cases.ts';

type Answer = { latitude: number; longitude: number; country: string; precision: string } | null;
type Geocode = (address: string) => Answer;

if (process.argv[2] === '--load') {
  // Child process: load one geocoder and report its load time and memory.
  const started = performance.now();
  if (process.argv[3] === 'baseline') baselineIndex();
  else gazetteerIndex();
  const loadMs = Math.round(performance.now() - started);
  const rssMb = Math.round(process.memoryUsage().rss / 1e6);
  // The first spelling search in a country (its index comes with the gazetteer, format 10).
  const spellingStarted = performance.now();
  if (process.argv[3] !== 'baseline') resolveAddress(gazetteerIndex(), 'Xqzzyvillex, US');
  const firstSpellingMs = Math.round(performance.now() - spellingStarted);
  const afterMb = Math.round(process.memoryUsage().rss / 1e6);
  console.log(JSON.stringify({ loadMs, rssMb, firstSpellingMs, afterMb }));
  process.exit(0);
}

const which = process.argv[2] === 'tune' ? 'tune' : 'held-out';
const index = gazetteerIndex();
const cases = evaluationCases(index).filter((c) => c.half === which);

const geocoders: { name: string; geocode: Geocode }[] = [
  {
    name: 'main (baseline)',
    geocode: (address) => {
      const { best } = baselineResolve(baselineIndex(), address);
      return best && best.confidence >= DEFAULT_MIN_CONFIDENCE
        ? { ...best.location, country: best.matchedCountry, precision: 'city' }
        : null;
    },
  },
  {
    name: 'this branch',
    geocode: (address) => {
      const { best } = resolveAddress(index, address);
      return best && best.confidence >= DEFAULT_MIN_CONFIDENCE
        ? { ...best.location, country: best.matchedCountry, precision: best.precision }
        : null;
    },
  },
];

type Figures = { rows: number; located: number; near: number; far: number; locality: number };
const pct = (n: number, d: number) => (d === 0 ? '   n/a' : `${((100 * n) / d).toFixed(1).padStart(5)}%`);

function score(geocode: Geocode, list: Case[]): Figures {
  const f: Figures = { rows: list.length, located: 0, near: 0, far: 0, locality: 0 };
  for (const c of list) {
    const answer = geocode(c.address);
    if (!answer) continue;
    f.located++;
    if (answer.precision === 'locality') f.locality++;
    if (c.expect !== 'place') continue;
    const km = kilometres(answer, c);
    if (km <= 50) f.near++;
    if (km > 500) f.far++;
  }
  return f;
}

const forms = [...new Set(cases.map((c) => c.form))];
console.log(
  `evaluation cases, ${which} half (seed in cases.ts): ${cases.length} of ` +
    `${evaluationCases(index).length}; threshold ${DEFAULT_MIN_CONFIDENCE} for both geocoders`,
);
console.log(
  'form                          | geocoder        | rows | located | ≤ 50 km | > 500 km | recall | locality',
);
const results = new Map<string, Map<string, Figures>>();
for (const form of forms) {
  const list = cases.filter((c) => c.form === form);
  const byGeocoder = new Map<string, Figures>();
  for (const geocoder of geocoders) {
    const f = score(geocoder.geocode, list);
    byGeocoder.set(geocoder.name, f);
    const placeForm = list[0]?.expect === 'place';
    console.log(
      `${form.padEnd(29)} | ${geocoder.name.padEnd(15)} | ${String(f.rows).padStart(4)} | ` +
        `${pct(f.located, f.rows)}  | ${placeForm ? pct(f.near, f.located) : '     - '}  | ` +
        `${placeForm ? pct(f.far, f.located) : '     - '}   | ${placeForm ? pct(f.near, f.rows) : '     -'} | ` +
        `${pct(f.locality, f.rows)}`,
    );
  }
  results.set(form, byGeocoder);
}

// Issue 33's goals on this half.
const branch = (form: string) => results.get(form)?.get('this branch');
const base = (form: string) => results.get(form)?.get('main (baseline)');
const goals: [string, boolean][] = [];
for (const form of ['City, Region, Country', 'City, CC']) {
  const f = branch(form);
  if (!f) continue;
  goals.push([`${form}: ≥ 98 % within 50 km (${pct(f.near, f.located).trim()})`, f.near >= 0.98 * f.located]);
  goals.push([`${form}: ≤ 0.5 % > 500 km (${pct(f.far, f.located).trim()})`, f.far <= 0.005 * f.located]);
}
const alone = branch('City alone');
if (alone)
  goals.push([
    `City alone: ≤ 5 % > 500 km (${pct(alone.far, alone.located).trim()})`,
    alone.far <= 0.05 * alone.located,
  ]);
const madeUpPlaced = forms
  .filter((form) => cases.find((c) => c.form === form)?.expect === 'none')
  .reduce((sum, form) => sum + (branch(form)?.located ?? 0), 0);
goals.push([`made-up names placed: ${madeUpPlaced}`, madeUpPlaced === 0]);
for (const form of forms.filter((f) => cases.find((c) => c.form === f)?.expect === 'place')) {
  const now = branch(form);
  const before = base(form);
  if (now && before)
    goals.push([
      `${form}: recall ${pct(now.near, now.rows).trim()} ≥ baseline ${pct(before.near, before.rows).trim()}`,
      now.near >= before.near,
    ]);
}
console.log('\ngoals (issue 33), this branch:');
for (const [goal, met] of goals) console.log(`  ${met ? 'met    ' : 'NOT MET'}  ${goal}`);

// Speed: every distinct address of the half, after start-up.
const distinct = [...new Set(cases.map((c) => c.address))];
console.log('');
for (const geocoder of geocoders) {
  geocoder.geocode(distinct[0] ?? '');
  const started = performance.now();
  for (let pass = 0; pass < 3; pass++) for (const address of distinct) geocoder.geocode(address);
  const seconds = (performance.now() - started) / 1000;
  const load = JSON.parse(
    execFileSync(
      process.execPath,
      [fileURLToPath(import.meta.url), '--load', geocoder.name.startsWith('main') ? 'baseline' : 'new'],
      { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '--disable-warning=ExperimentalWarning' } },
    ),
  ) as { loadMs: number; rssMb: number; firstSpellingMs: number; afterMb: number };
  const spelling = geocoder.name.startsWith('main')
    ? ''
    : `; first spelling search ("…, US") ${load.firstSpellingMs} ms, RSS then ${load.afterMb} MB`;
  console.log(
    `${geocoder.name.padEnd(15)}: ${Math.round((3 * distinct.length) / seconds)} distinct addresses/s ` +
      `(${distinct.length} × 3); load ${load.loadMs} ms, RSS after load ${load.rssMb} MB${spelling}`,
  );
}

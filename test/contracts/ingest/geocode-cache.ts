import type { Test } from 'tap';
import type { GeocodeCache } from '../../../src/ports/ingest/geocode-cache.ts';
import type { GeocodeOutcome } from '../../../src/ports/ingest/geocoder.ts';

// What every implementation of the GeocodeCache port does, as one suite: run against the in-memory
// fake (test/unit/fakes/ingest/geocode-cache.test.ts) and against postgresGeocodeCache
// (test/integration/ingest/geocode-cache-contract.test.ts).

/** A fresh, empty cache. */
export type MakeGeocodeCache = () => Promise<GeocodeCache>;

const NOMINATIM = 'nominatim:https://nominatim.example.org';
const PHOTON = 'photon:https://photon.example.org';

/** The three shapes a provider's answer takes. */
const located: GeocodeOutcome = {
  location: { latitude: 50.94, longitude: 6.95 },
  confidence: 0.7,
  match: {
    provider: NOMINATIM,
    matchedName: 'Köln',
    matchedCountry: 'DE',
    matchedRegion: 'Nordrhein-Westfalen',
  },
};
const notFound: GeocodeOutcome = { failure: 'not found' };
const doubtful: GeocodeOutcome = {
  failure: 'below the confidence threshold',
  lowConfidence: true,
  confidence: 0.25,
  match: { provider: NOMINATIM, matchedName: 'Springfield', matchedCountry: 'US', matchedRegion: null },
};

export function geocodeCacheContract(t: Test, make: MakeGeocodeCache): void {
  t.test('an outcome comes back as it was stored, whatever its shape', async (t) => {
    const cache = await make();
    await cache.put(
      NOMINATIM,
      new Map([
        ['Köln', located],
        ['Kleinweiler bei Nirgendwo', notFound],
        ['Springfield', doubtful],
      ]),
    );
    const found = await cache.get(NOMINATIM, ['Köln', 'Kleinweiler bei Nirgendwo', 'Springfield']);
    t.same(Object.fromEntries(found), {
      Köln: located,
      'Kleinweiler bei Nirgendwo': notFound,
      Springfield: doubtful,
    });
  });

  t.test('only the queries asked for, and only those stored', async (t) => {
    const cache = await make();
    t.same([...(await cache.get(NOMINATIM, []))], [], 'nothing asked');
    t.same([...(await cache.get(NOMINATIM, ['Köln']))], [], 'nothing stored');
    await cache.put(
      NOMINATIM,
      new Map([
        ['Köln', located],
        ['Bonn', notFound],
      ]),
    );
    t.same([...(await cache.get(NOMINATIM, ['Köln', 'Aachen'])).keys()], ['Köln']);
  });

  t.test("each provider's answers are its own", async (t) => {
    const cache = await make();
    await cache.put(NOMINATIM, new Map([['Köln', located]]));
    t.same([...(await cache.get(PHOTON, ['Köln']))], [], 'another provider has not answered it');
    await cache.put(PHOTON, new Map([['Köln', notFound]]));
    t.same((await cache.get(PHOTON, ['Köln'])).get('Köln'), notFound);
    t.same((await cache.get(NOMINATIM, ['Köln'])).get('Köln'), located);
  });

  t.test('the first answer stored for a query stays', async (t) => {
    // Two jobs may ask the same address at once; whichever stores first is what every later job gets.
    const cache = await make();
    await cache.put(NOMINATIM, new Map([['Köln', located]]));
    await cache.put(NOMINATIM, new Map([['Köln', notFound]]));
    t.same((await cache.get(NOMINATIM, ['Köln'])).get('Köln'), located);
  });

  t.test('queries are compared exactly', async (t) => {
    const cache = await make();
    await cache.put(NOMINATIM, new Map([['Köln', located]]));
    t.same([...(await cache.get(NOMINATIM, ['köln', 'Köln ', 'Koeln']))], []);
  });
}

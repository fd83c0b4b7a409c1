import t from 'tap';
import { gazetteerIndex } from '../../../../src/adapters/geocoding/gazetteer-data.ts';
import { offlineGazetteer } from '../../../../src/adapters/geocoding/offline-gazetteer.ts';
import { resolveAddress } from '../../../../src/domain/ingest/geocoding/resolve-address.ts';

// The offline gazetteer on its real data (GeoNames cities1000, region and country names): the
// places of issue 20 that landed in the wrong country, and what people write for them.

const at = (address: string) => {
  const { best, failure } = resolveAddress(gazetteerIndex(), address);
  return best
    ? [
        best.matchedName,
        best.matchedCountry,
        Math.round(best.location.latitude),
        Math.round(best.location.longitude),
      ]
    : failure;
};

t.test('exonyms and local names find the same city', async (t) => {
  for (const address of ['Cologne, Germany', 'Cologne, DE', 'Köln', 'Koeln, Deutschland', 'Cologne, DEU'])
    t.same(at(address), ['Köln', 'DE', 51, 7], address);
  for (const address of ['Seville, Spain', 'Sevilla, ES', 'Seville, España'])
    t.same(at(address), ['Sevilla', 'ES', 37, -6], address);
  t.same(at('München'), ['Munich', 'DE', 48, 12]);
  t.same(at('Lisboa, Portugal'), ['Lisbon', 'PT', 39, -9]);
  t.same(at('Kiev'), ['Kyiv', 'UA', 50, 31]);
  t.same(at('Москва'), ['Moscow', 'RU', 56, 38]);
});

t.test('regions by English name, local name or ISO code', async (t) => {
  for (const address of ['Munich, Bavaria, Germany', 'Munich, Bayern', 'München, BY, DE'])
    t.same(at(address), ['Munich', 'DE', 48, 12], address);
  t.same(at('Springfield, Illinois'), ['Springfield', 'US', 40, -90]);
  t.same(at('Springfield, IL, USA'), ['Springfield', 'US', 40, -90]);
  t.same(at('Los Angeles, CA'), ['Los Angeles', 'US', 34, -118]);
});

t.test('the named country is never overruled', async (t) => {
  t.same(at('Cologne, Italy'), ['Cologne', 'IT', 46, 10]);
  t.same(at('Seville, Ohio'), ['Seville', 'US', 41, -82]);
  t.equal(at('Köln, Spain'), 'no matching place inside the given country or region');
});

t.test('USGS-style distances and later parts are less direct answers', async (t) => {
  const near = resolveAddress(gazetteerIndex(), '145 km E of Hihifo, Tonga').best;
  t.equal(near?.matchedName, 'Hihifo');
  t.ok((near?.confidence ?? 1) <= 0.75);
  const street = resolveAddress(gazetteerIndex(), 'Calle Mayor 1, Madrid, Spain').best;
  t.equal(street?.matchedName, 'Madrid');
  t.ok((street?.confidence ?? 1) <= 0.75);
});

t.test('ambiguity is a low-confidence failure with what was matched', async (t) => {
  const geocoder = offlineGazetteer({ minConfidence: 0.5 });
  const results = await geocoder.geocode(['Springfield, US', 'Cologne, Germany', 'Nowhere Land at all']);
  t.match(results.get('Springfield, US'), {
    failure: /low confidence/,
    lowConfidence: true,
    match: { provider: 'offline-geonames', matchedCountry: 'US' },
  });
  t.match(results.get('Cologne, Germany'), {
    location: { latitude: Number },
    match: { provider: 'offline-geonames', matchedName: 'Köln', matchedCountry: 'DE' },
  });
  t.same(results.get('Nowhere Land at all'), { failure: 'no matching place' });
  const [explained] = await geocoder.explain('Springfield, US');
  t.ok((explained?.candidates.length ?? 0) > 3, 'every Springfield considered, with its score');
});

t.test('towns cities1000 lacks are found in the newer extract (the supplement)', async (t) => {
  t.same(at('Glanmire, IE'), ['Glanmire', 'IE', 52, -8]);
  t.same(at('Figuil, Cameroon'), ['Figuil', 'CM', 10, 14]);
  t.same(at('Bibā, Banī Suwayf, Egypt'), ['Bibā', 'EG', 29, 31]);
  t.match(at('Glanmire, France'), /not a known place|no matching place/);
  t.ok(gazetteerIndex().stats.supplement > 10_000, 'tens of thousands of places added');
});

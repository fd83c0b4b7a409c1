import t from 'tap';
import {
  gazetteer,
  lookUp,
  offlineGazetteer,
  placeKey,
} from '../../../src/adapters/geocoding/offline-gazetteer.ts';

t.test('place keys ignore case, accents and punctuation', async (t) => {
  t.equal(placeKey('São Paulo'), placeKey('sao-paulo'));
  t.equal(placeKey('  KÖLN '), 'koln');
});

t.test('looks places up by name, with country codes and USGS-style distances', async (t) => {
  const index = gazetteer();
  const at = (address: string) => {
    const outcome = lookUp(index, address);
    return 'location' in outcome
      ? [Math.round(outcome.location.latitude), Math.round(outcome.location.longitude), outcome.confidence]
      : outcome.failure;
  };
  t.same(at('Berlin'), [53, 13, 0.9]);
  t.same(at('Köln'), [51, 7, 0.9]);
  t.same(at('Paris, US'), [34, -96, 0.9], 'a country code picks the Paris in the US');
  t.same(at('Calle Mayor 1, Madrid'), [40, -4, 0.7], 'a later part matches with less confidence');
  t.same(at('145 km E of Hihifo, Tonga'), [-16, -174, 0.7], 'near a place is not in it');
  t.equal(at('Nowhere Land at all'), 'no matching place');
});

t.test('low confidence is a failure, not a location', async (t) => {
  const geocoder = offlineGazetteer({ minConfidence: 0.8 });
  const results = await geocoder.geocode(['Berlin', 'Calle Mayor 1, Madrid', 'Springfield']);
  t.ok('location' in (results.get('Berlin') ?? {}));
  t.match(results.get('Calle Mayor 1, Madrid'), { failure: /low confidence/ });
  t.match(results.get('Springfield'), { failure: /low confidence/ }, 'many Springfields of similar size');
});

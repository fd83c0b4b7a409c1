// Builds the offline gazetteer's compact file ahead of the first geocoding (scripts/setup runs it
// after `npm ci`): the first process would otherwise spend several seconds building it from the
// source packages (src/adapters/geocoding/gazetteer-data.ts).
import { gazetteerIndex } from '../src/adapters/geocoding/gazetteer-data.ts';

const index = gazetteerIndex();
console.log(
  `gazetteer: ${index.stats.places} places, ${index.stats.names} names, ready in ${index.stats.loadMs} ms`,
);

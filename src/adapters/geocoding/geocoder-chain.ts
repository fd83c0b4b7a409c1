import type { GeocodeOutcome, Geocoder } from '../../ports/ingest/geocoder.ts';

// The provider chain: the offline gazetteer answers first; only the addresses it could not resolve
// (not found, or found with too low a confidence) go to the online provider, whose answers the shared
// cache keeps. An online "not found" keeps the offline reason when offline had found a candidate.

export function geocoderChain(offline: Geocoder, online: Geocoder): Geocoder {
  return {
    name: `${offline.name}+${online.name}`,
    async geocode(addresses, options) {
      const results = await offline.geocode(addresses, options);
      const unresolved = addresses.filter((address) => !('location' in (results.get(address) ?? {})));
      if (unresolved.length === 0) return results;
      const answers = await online.geocode(unresolved, options);
      for (const address of unresolved) {
        const answer = answers.get(address);
        const before = results.get(address);
        if (answer && ('location' in answer || !before || !isLowConfidence(before)))
          results.set(address, answer);
      }
      return results;
    },
    async explain(address) {
      const first = await offline.explain(address);
      const offlineOutcome = first[0]?.outcome;
      if (offlineOutcome && 'location' in offlineOutcome) return first;
      return [...first, ...(await online.explain(address))];
    },
  };
}

function isLowConfidence(outcome: GeocodeOutcome): boolean {
  return 'failure' in outcome && outcome.lowConfidence === true;
}

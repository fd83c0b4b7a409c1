import type { Geocoder } from '../../ports/geocoder.ts';
import type { GeocoderConfig } from '../config/ingest-config.ts';
import type { DatabasePool } from '../postgres/database.ts';
import { postgresGeocodeCache } from '../postgres/geocode-cache.ts';
import { nominatimGeocoder } from './nominatim-geocoder.ts';
import { offlineGazetteer } from './offline-gazetteer.ts';

/** The configured geocoder: none (off), the offline gazetteer (default), or a Nominatim-compatible server. */
export function buildGeocoder(config: GeocoderConfig, pool: DatabasePool): Geocoder | null {
  switch (config.kind) {
    case 'off':
      return null;
    case 'offline':
      return offlineGazetteer();
    case 'nominatim':
      return nominatimGeocoder(config, postgresGeocodeCache(pool));
  }
}

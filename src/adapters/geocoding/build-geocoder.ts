import type { Geocoder } from '../../ports/ingest-ports.ts';
import type { GeocoderConfig } from '../config/ingest-config.ts';
import type { DatabasePool } from '../postgres/database.ts';

/** The configured geocoder: none (off), the offline gazetteer, or a Nominatim-compatible server. */
export function buildGeocoder(config: GeocoderConfig, _pool: DatabasePool): Geocoder | null {
  if (config.kind === 'off') return null;
  return null;
}

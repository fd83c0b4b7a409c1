import type { Geocoder } from '../../ports/ingest/geocoder.ts';
import {
  DEFAULT_GEOCODER_USER_AGENT,
  type GeocoderConfig,
  type OnlineGeocoderConfig,
} from '../config/ingest-config.ts';
import type { DatabasePool } from '../postgres/database.ts';
import { postgresGeocodeCache } from '../postgres/ingest/geocode-cache.ts';
import { geocoderChain } from './geocoder-chain.ts';
import { onlineGeocoder, PUBLIC_NOMINATIM_POLICY } from './nominatim-geocoder.ts';
import { offlineGazetteer } from './offline-gazetteer.ts';

/**
 * The configured geocoder: none (off), the offline gazetteer (default) optionally followed by an
 * online provider for what it could not resolve, or an online provider alone.
 */
export function buildGeocoder(config: GeocoderConfig, pool: DatabasePool): Geocoder | null {
  const online = (kind: 'nominatim' | 'photon', settings: OnlineGeocoderConfig) =>
    onlineGeocoder(
      {
        flavour: kind,
        url: settings.url,
        requestsPerSecond: settings.requestsPerSecond,
        scheduledRequestsPerMinute:
          settings.scheduledRequestsPerMinute ?? PUBLIC_NOMINATIM_POLICY.scheduledRequestsPerMinute,
        timeoutMs: settings.timeoutMs,
        minConfidence: settings.minConfidence,
        userAgent: settings.userAgent ?? DEFAULT_GEOCODER_USER_AGENT,
        maxRetryAfterMs: settings.maxRetryAfterMs ?? PUBLIC_NOMINATIM_POLICY.maxRetryAfterMs,
      },
      postgresGeocodeCache(pool),
    );
  switch (config.kind) {
    case 'off':
      return null;
    case 'offline': {
      const offline = offlineGazetteer(
        config.minConfidence === undefined ? undefined : { minConfidence: config.minConfidence },
      );
      return config.fallback
        ? geocoderChain(offline, online(config.fallback.kind, config.fallback))
        : offline;
    }
    case 'nominatim':
    case 'photon':
      return online(config.kind, config);
  }
}

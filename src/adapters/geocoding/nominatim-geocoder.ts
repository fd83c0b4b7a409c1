import { confidenceVerdict } from '../../domain/ingest/geocoding/confidence.ts';
import type { GeocodeMatch } from '../../domain/ingest/geocoding/located-by.ts';
import {
  MAX_RESOLVED_ADDRESS_CHARS,
  type ScoredCandidate,
} from '../../domain/ingest/geocoding/resolve-address.ts';
import type { GeocodeCache } from '../../ports/ingest/geocode-cache.ts';
import type { GeocodeOptions, GeocodeOutcome, Geocoder } from '../../ports/ingest/geocoder.ts';

// An online geocoder: a Nominatim-compatible server (`/search?q=...&format=jsonv2`, its `importance`
// is the confidence) or a Photon-compatible one (`/api?q=...`, GeoJSON; Photon gives no score, so its
// first answer counts as PHOTON_CONFIDENCE). Each distinct address is asked once (cache table).
// The public Nominatim's usage policy is the default: an identifying User-Agent, at most one request
// a second for imports a person started and four a minute for scheduled and scraper imports, and a
// 429's Retry-After honoured; a private server can be given other rates. Transient failures (429
// past the longest wait, 5xx, timeouts, a garbled answer) throw with the HTTP status so that the
// workflow retries the stage; answers already cached stay cached.

export type OnlineGeocoderOptions = {
  flavour: 'nominatim' | 'photon';
  url: string;
  /** Requests per second for interactive imports (public Nominatim: 1). */
  requestsPerSecond: number;
  /** Requests per minute for scheduled and scraper imports (public Nominatim: 4). */
  scheduledRequestsPerMinute: number;
  timeoutMs: number;
  minConfidence: number;
  userAgent: string;
  /** Longest Retry-After waited for in place; a longer one fails the stage, which is retried later. */
  maxRetryAfterMs: number;
};

/** Public Nominatim's usage policy (https://operations.osmfoundation.org/policies/nominatim/). */
export const PUBLIC_NOMINATIM_POLICY = {
  requestsPerSecond: 1,
  scheduledRequestsPerMinute: 4,
  maxRetryAfterMs: 60_000,
};

const PHOTON_CONFIDENCE = 0.6;
const EXPLAIN_LIMIT = 5;

class GeocoderHttpError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, message: string, code = `HTTP_${status}`) {
    super(message);
    this.name = 'GeocoderHttpError';
    this.status = status;
    this.code = code;
  }
}

type OnlinePlace = {
  latitude: number;
  longitude: number;
  confidence: number;
  name: string | null;
  country: string | null;
  region: string | null;
};

const invalid = (message: string) => new GeocoderHttpError(502, message, 'INVALID_RESPONSE');
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
const countryCode = (value: unknown) => text(value)?.toUpperCase().slice(0, 2) ?? null;

function checkedCoordinates(latitude: number, longitude: number): void {
  if (
    !Number.isFinite(latitude) ||
    !Number.isFinite(longitude) ||
    Math.abs(latitude) > 90 ||
    Math.abs(longitude) > 180
  )
    throw invalid('the geocoder answered a place without valid coordinates');
}

/** The places of a Nominatim `jsonv2` answer, best first. */
function nominatimPlaces(body: unknown): OnlinePlace[] {
  if (!Array.isArray(body)) throw invalid('the geocoder answered something other than a JSON array');
  return body.slice(0, EXPLAIN_LIMIT).map((raw: unknown) => {
    const place = (raw ?? {}) as Record<string, unknown>;
    const latitude = Number(place.lat);
    const longitude = Number(place.lon);
    checkedCoordinates(latitude, longitude);
    const address = (place.address ?? {}) as Record<string, unknown>;
    const importance = typeof place.importance === 'number' ? place.importance : 0;
    return {
      latitude,
      longitude,
      confidence: Math.max(0, Math.min(1, importance)),
      name: text(place.name) ?? text(place.display_name),
      country: countryCode(address.country_code),
      region: text(address.state),
    };
  });
}

/** The places of a Photon answer (GeoJSON FeatureCollection), best first. */
function photonPlaces(body: unknown): OnlinePlace[] {
  const features = (body as { features?: unknown } | null)?.features;
  if (!Array.isArray(features)) throw invalid('the geocoder answered something other than GeoJSON features');
  return features.slice(0, EXPLAIN_LIMIT).map((raw: unknown, position) => {
    const feature = (raw ?? {}) as {
      geometry?: { coordinates?: unknown };
      properties?: Record<string, unknown>;
    };
    const coordinates = Array.isArray(feature.geometry?.coordinates) ? feature.geometry.coordinates : [];
    const longitude = Number(coordinates[0]);
    const latitude = Number(coordinates[1]);
    checkedCoordinates(latitude, longitude);
    const properties = feature.properties ?? {};
    return {
      latitude,
      longitude,
      confidence: position === 0 ? PHOTON_CONFIDENCE : PHOTON_CONFIDENCE / 2,
      name: text(properties.name),
      country: countryCode(properties.countrycode),
      region: text(properties.state),
    };
  });
}

/** The best place as an outcome: (0,0) and a confidence under the threshold are failures. */
function onlineOutcome(places: OnlinePlace[], provider: string, minConfidence: number): GeocodeOutcome {
  const first = places[0];
  if (!first) return { failure: 'not found' };
  if (first.latitude === 0 && first.longitude === 0) return { failure: 'resolved to (0,0)' };
  const match: GeocodeMatch = {
    provider,
    matchedName: first.name,
    matchedCountry: first.country,
    matchedRegion: first.region,
  };
  if (confidenceVerdict(first.confidence, minConfidence) === 'low-confidence')
    return {
      failure: `low confidence (${first.confidence})`,
      lowConfidence: true,
      confidence: first.confidence,
      match,
    };
  return {
    location: { latitude: first.latitude, longitude: first.longitude },
    confidence: first.confidence,
    match,
  };
}

/** Milliseconds a Retry-After header asks for (seconds or an HTTP date); null when absent or garbled. */
function retryAfterMs(header: string | null, now: number): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * The time the request policy keeps: milliseconds now, and a wait. The system's in production; a
 * test passes a fake one, so it can check the waits the policy asks for without waiting them.
 */
export type PolicyTimer = { now(): number; sleep(ms: number): Promise<void> };

const systemTimer: PolicyTimer = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** The step of a millisecond clock such as Date.now(). */
const CLOCK_RESOLUTION_MS = 1;

export function onlineGeocoder(
  options: OnlineGeocoderOptions,
  cache: GeocodeCache,
  timer: PolicyTimer = systemTimer,
): Geocoder {
  const name = `${options.flavour}:${options.url}`;
  // One timeline per server: the next moment a request may leave, whatever the import's kind.
  let nextSlot = 0;
  /** Waits for this request's turn; gives the spacing to keep after it. */
  const waitForSlot = async (scheduled: boolean): Promise<number> => {
    const spacingMs = scheduled
      ? 60_000 / options.scheduledRequestsPerMinute
      : 1000 / options.requestsPerSecond;
    const now = timer.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + spacingMs;
    // Timers may fire a millisecond early: wait until the slot has really come.
    while (timer.now() < slot) await timer.sleep(slot - timer.now());
    return spacingMs;
  };

  /**
   * Marks a request leaving now: none leaves for this server before `spacingMs` from now. Called
   * right before `fetch`, with nothing asynchronous in between: a timer that fired late (a busy
   * process) must not shorten the gap to the next request, so the spacing counts from when this
   * one leaves, plus the clock's resolution, since a millisecond clock cannot tell whether it
   * leaves at the start or the end of this millisecond (seen in CI: 999 ms between two requests
   * by the clock of the caller's fetch).
   */
  const leaving = (spacingMs: number) => {
    nextSlot = Math.max(nextSlot, timer.now() + spacingMs + CLOCK_RESOLUTION_MS);
  };

  const searchUrl = (address: string, limit: number) =>
    options.flavour === 'photon'
      ? `${options.url}/api?limit=${limit}&q=${encodeURIComponent(address)}`
      : `${options.url}/search?format=jsonv2&addressdetails=1&limit=${limit}&q=${encodeURIComponent(address)}`;

  const request = async (url: string, spacingMs: number): Promise<Response> => {
    try {
      leaving(spacingMs);
      return await fetch(url, {
        headers: { 'user-agent': options.userAgent, accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw Object.assign(
        new Error(
          timedOut
            ? `the geocoder did not answer within ${options.timeoutMs} ms`
            : `cannot reach the geocoder: ${(error as Error).message}`,
        ),
        {
          code: timedOut
            ? 'ETIMEDOUT'
            : ((error as { cause?: { code?: string } }).cause?.code ?? 'ECONNREFUSED'),
        },
      );
    }
  };

  const ask = async (address: string, limit: number, scheduled: boolean): Promise<OnlinePlace[]> => {
    for (;;) {
      const spacingMs = await waitForSlot(scheduled);
      const response = await request(searchUrl(address, limit), spacingMs);
      if (response.status === 429) {
        await response.body?.cancel();
        const wait = retryAfterMs(response.headers.get('retry-after'), timer.now());
        // Nothing leaves for this server before the time it asked for.
        if (wait !== null) nextSlot = Math.max(nextSlot, timer.now() + wait);
        if (wait !== null && wait <= options.maxRetryAfterMs) continue;
        throw new GeocoderHttpError(429, 'the geocoder answered 429 Too Many Requests');
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new GeocoderHttpError(
          response.status,
          `the geocoder answered ${response.status} ${response.statusText}`,
        );
      }
      let body: unknown;
      try {
        body = await response.json();
      } catch {
        throw invalid('the geocoder answered something that is not JSON');
      }
      return options.flavour === 'photon' ? photonPlaces(body) : nominatimPlaces(body);
    }
  };

  return {
    name,
    async geocode(addresses, geocodeOptions?: GeocodeOptions) {
      const scheduled = geocodeOptions?.scheduled ?? false;
      const results = await cache.get(name, addresses);
      for (const address of addresses) {
        if (results.has(address)) continue;
        // Not sent: a server refuses such a URL, and the refusal would fail the whole stage.
        if (address.length > MAX_RESOLVED_ADDRESS_CHARS) {
          results.set(address, { failure: `address longer than ${MAX_RESOLVED_ADDRESS_CHARS} characters` });
          continue;
        }
        const outcome = onlineOutcome(await ask(address, 1, scheduled), name, options.minConfidence);
        results.set(address, outcome);
        // Cached one by one: a later failure in the batch does not lose what was already paid for.
        await cache.put(name, new Map([[address, outcome]]));
      }
      return results;
    },
    async explain(address) {
      const places = await ask(address, EXPLAIN_LIMIT, false);
      const candidates: ScoredCandidate[] = places.map((p) => ({
        name: p.name ?? '',
        country: p.country ?? '',
        region: p.region,
        latitude: p.latitude,
        longitude: p.longitude,
        population: 0,
        matchedText: address,
        score: p.confidence,
        rejected: null,
      }));
      return [{ provider: name, outcome: onlineOutcome(places, name, options.minConfidence), candidates }];
    },
  };
}

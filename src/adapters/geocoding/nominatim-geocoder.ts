import type { GeocodeCache } from '../../ports/geocode-cache.ts';
import type { Geocoder } from '../../ports/geocoder.ts';
import type { GeocodeOutcome } from '../../ports/geocoder.ts';

// A Nominatim-compatible HTTP geocoder (`/search?q=...&format=jsonv2`). Each distinct address is
// asked once (cache table), requests are spaced to the configured rate, and the answer's
// `importance` is its confidence. Transient failures (429, 5xx, timeouts, a garbled answer) throw
// with the HTTP status so that the workflow retries the stage; answers already cached stay cached.

export type NominatimOptions = {
  url: string;
  requestsPerSecond: number;
  timeoutMs: number;
  minConfidence: number;
  userAgent?: string;
};

export class GeocoderHttpError extends Error {
  readonly status: number;
  readonly code: string;

  constructor(status: number, message: string, code = `HTTP_${status}`) {
    super(message);
    this.name = 'GeocoderHttpError';
    this.status = status;
    this.code = code;
  }
}

type NominatimPlace = { lat?: unknown; lon?: unknown; importance?: unknown };

export function parseNominatimAnswer(body: unknown, minConfidence: number): GeocodeOutcome {
  if (!Array.isArray(body))
    throw new GeocoderHttpError(
      502,
      'the geocoder answered something other than a JSON array',
      'INVALID_RESPONSE',
    );
  const first = body[0] as NominatimPlace | undefined;
  if (!first) return { failure: 'not found' };
  const latitude = Number(first.lat);
  const longitude = Number(first.lon);
  if (
    !Number.isFinite(latitude) ||
    !Number.isFinite(longitude) ||
    Math.abs(latitude) > 90 ||
    Math.abs(longitude) > 180
  ) {
    throw new GeocoderHttpError(
      502,
      'the geocoder answered a place without valid coordinates',
      'INVALID_RESPONSE',
    );
  }
  if (latitude === 0 && longitude === 0) return { failure: 'resolved to (0,0)' };
  const confidence = typeof first.importance === 'number' ? Math.max(0, Math.min(1, first.importance)) : 0;
  if (confidence < minConfidence) return { failure: `low confidence (${confidence})` };
  return { location: { latitude, longitude }, confidence };
}

export function nominatimGeocoder(options: NominatimOptions, cache: GeocodeCache): Geocoder {
  const name = `nominatim:${options.url}`;
  const spacingMs = 1000 / options.requestsPerSecond;
  let nextSlot = 0;
  const waitForSlot = async () => {
    const now = Date.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + spacingMs;
    if (slot > now) await new Promise((resolve) => setTimeout(resolve, slot - now));
  };

  const ask = async (address: string): Promise<GeocodeOutcome> => {
    await waitForSlot();
    const url = `${options.url}/search?format=jsonv2&limit=1&q=${encodeURIComponent(address)}`;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { 'user-agent': options.userAgent ?? 'chronomap-ingest', accept: 'application/json' },
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
      throw new GeocoderHttpError(
        502,
        'the geocoder answered something that is not JSON',
        'INVALID_RESPONSE',
      );
    }
    return parseNominatimAnswer(body, options.minConfidence);
  };

  return {
    name,
    async geocode(addresses) {
      const results = await cache.get(name, addresses);
      for (const address of addresses) {
        if (results.has(address)) continue;
        const outcome = await ask(address);
        results.set(address, outcome);
        // Cached one by one: a later failure in the batch does not lose what was already paid for.
        await cache.put(name, new Map([[address, outcome]]));
      }
      return results;
    },
  };
}

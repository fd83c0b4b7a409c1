import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { geocoderChain } from '../../../src/adapters/geocoding/geocoder-chain.ts';
import {
  onlineGeocoder,
  type OnlineGeocoderOptions,
  type PolicyTimer,
} from '../../../src/adapters/geocoding/nominatim-geocoder.ts';
import { offlineGazetteer } from '../../../src/adapters/geocoding/offline-gazetteer.ts';
import { memoryGeocodeCache } from '../../fakes/ingest/geocode-cache.ts';

// The provider chain and the online provider's request policy, against real HTTP servers on
// loopback: what leaves for the server (User-Agent, how often, after a 429) and what the chain asks
// it (only what the offline gazetteer could not resolve). The rate policy runs on a fake timer: the
// test reads the gaps it kept between departures on that timer, which the machine's load cannot
// stretch or shrink, and waits none of them.

type Seen = { query: string; userAgent: string; path: string };
type Answer = { status: number; body: string; headers?: Record<string, string> };

async function fakeServer(t: Test, answer: (seen: Seen, count: number) => Answer) {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const entry = {
      query: url.searchParams.get('q') ?? '',
      userAgent: request.headers['user-agent'] ?? '',
      path: url.pathname,
    };
    seen.push(entry);
    const { status, body, headers } = answer(entry, seen.length);
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A timer whose time moves only when the policy sleeps, by exactly what it asked for. */
function fakeTimer(): PolicyTimer & { waits: number[] } {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const waits: number[] = [];
  return {
    waits,
    now: () => now,
    async sleep(ms) {
      waits.push(ms);
      now += ms;
    },
  };
}

/** When, on the time `now` reads, the geocoder's requests to `base` leave this process. */
function departures(t: Test, base: string, now: () => number): number[] {
  const times: number[] = [];
  const original = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    if (String(input instanceof Request ? input.url : input).startsWith(base)) times.push(now());
    return original(input, init);
  };
  t.teardown(() => {
    globalThis.fetch = original;
  });
  return times;
}
const gapsOf = (times: number[]) => times.slice(1).map((time, i) => time - (times[i] as number));

const nominatimPlace = (lat: number, lon: number, importance: number, name = 'Somewhere') =>
  JSON.stringify([
    {
      lat: String(lat),
      lon: String(lon),
      importance,
      name,
      address: { country_code: 'de', state: 'Bayern' },
    },
  ]);

const options = (url: string, overrides: Partial<OnlineGeocoderOptions> = {}): OnlineGeocoderOptions => ({
  flavour: 'nominatim',
  url,
  requestsPerSecond: 1,
  scheduledRequestsPerMinute: 4,
  timeoutMs: 2000,
  minConfidence: 0.5,
  userAgent: 'Chronomap-test/1 (ops@example.org)',
  maxRetryAfterMs: 60_000,
  ...overrides,
});

t.test('the chain asks the online provider only what the offline gazetteer could not resolve', async (t) => {
  const server = await fakeServer(t, () => ({
    status: 200,
    body: nominatimPlace(48.1, 11.6, 0.7, 'Kleinweiler'),
  }));
  const chain = geocoderChain(
    offlineGazetteer(),
    onlineGeocoder(options(server.url, { requestsPerSecond: 100 }), memoryGeocodeCache()),
  );
  const results = await chain.geocode(['Cologne, Germany', 'Kleinweiler bei Nirgendwo', 'Springfield, US']);
  t.same(
    server.seen.map((s) => s.query).sort(),
    ['Kleinweiler bei Nirgendwo', 'Springfield, US'],
    'Cologne was answered offline; the ambiguous Springfield and the unknown hamlet went online',
  );
  t.match(results.get('Cologne, Germany'), { match: { provider: 'offline-geonames', matchedName: 'Köln' } });
  t.match(results.get('Kleinweiler bei Nirgendwo'), {
    location: { latitude: 48.1, longitude: 11.6 },
    match: { provider: `nominatim:${server.url}`, matchedName: 'Kleinweiler', matchedCountry: 'DE' },
  });
  const explained = await chain.explain('Kleinweiler bei Nirgendwo');
  t.same(
    explained.map((e) => e.provider),
    ['offline-geonames', `nominatim:${server.url}`],
    'the test route shows both providers',
  );
  const again = await chain.geocode(['Kleinweiler bei Nirgendwo']);
  t.ok('location' in (again.get('Kleinweiler bei Nirgendwo') ?? {}));
  t.equal(server.seen.length, 3, 'the second time it came from the shared cache (the explain asked once)');
});

t.test('an online "not found" does not hide why offline refused an ambiguous place', async (t) => {
  const server = await fakeServer(t, () => ({ status: 200, body: '[]' }));
  const chain = geocoderChain(
    offlineGazetteer(),
    onlineGeocoder(options(server.url, { requestsPerSecond: 100 }), memoryGeocodeCache()),
  );
  const results = await chain.geocode(['Springfield, US']);
  t.match(results.get('Springfield, US'), { lowConfidence: true, match: { provider: 'offline-geonames' } });
});

t.test('the public policy: an identifying User-Agent and one request a second', async (t) => {
  const server = await fakeServer(t, () => ({ status: 200, body: nominatimPlace(1, 1, 0.9) }));
  const timer = fakeTimer();
  const geocoder = onlineGeocoder(options(server.url), memoryGeocodeCache(), timer);
  const sent = departures(t, server.url, timer.now);
  await geocoder.geocode(['a', 'b', 'c']);
  t.same(
    server.seen.map((s) => s.userAgent),
    Array(3).fill('Chronomap-test/1 (ops@example.org)'),
  );
  const gaps = gapsOf(sent);
  t.equal(sent.length, 3);
  t.ok(
    gaps.every((gap) => gap >= 1000),
    `requests at least a second apart (${gaps.join(', ')} ms)`,
  );
});

t.test('scheduled imports ask at the slower per-minute rate', async (t) => {
  const server = await fakeServer(t, () => ({ status: 200, body: nominatimPlace(1, 1, 0.9) }));
  const timer = fakeTimer();
  const geocoder = onlineGeocoder(
    options(server.url, { requestsPerSecond: 100, scheduledRequestsPerMinute: 4 }),
    memoryGeocodeCache(),
    timer,
  );
  // One recorder for both geocoders: each request is timed on the timer of the geocoder sending it.
  let sender = timer;
  const sent = departures(t, server.url, () => sender.now());
  await geocoder.geocode(['a', 'b', 'c'], { scheduled: true });
  const gaps = gapsOf(sent);
  t.equal(sent.length, 3);
  t.ok(
    gaps.every((gap) => gap >= 15_000),
    `scheduled requests 4 a minute, 15 s apart (${gaps.join(', ')} ms)`,
  );
  const interactiveTimer = fakeTimer();
  const interactive = onlineGeocoder(
    options(server.url, { requestsPerSecond: 100 }),
    memoryGeocodeCache(),
    interactiveTimer,
  );
  sender = interactiveTimer;
  await interactive.geocode(['d', 'e', 'f']);
  const interactiveSent = sent.slice(3);
  const interactiveGaps = gapsOf(interactiveSent);
  t.equal(interactiveSent.length, 3);
  t.ok(
    interactiveGaps.every((gap) => gap >= 10 && gap < 15_000),
    `an interactive import keeps its own rate, 100 a second, not the scheduled one (${interactiveGaps.join(', ')} ms)`,
  );
});

t.test('a 429 is waited out as its Retry-After asks, then the request is made again', async (t) => {
  const server = await fakeServer(t, (_seen, count) =>
    count === 1
      ? { status: 429, body: '{}', headers: { 'retry-after': '1' } }
      : { status: 200, body: nominatimPlace(1, 1, 0.9) },
  );
  const timer = fakeTimer();
  const geocoder = onlineGeocoder(
    options(server.url, { requestsPerSecond: 100 }),
    memoryGeocodeCache(),
    timer,
  );
  const sent = departures(t, server.url, timer.now);
  const results = await geocoder.geocode(['a']);
  t.ok('location' in (results.get('a') ?? {}));
  t.equal(server.seen.length, 2);
  const [gap] = gapsOf(sent);
  t.ok((gap ?? 0) >= 1000, `the retry waited the second it was asked to (${gap} ms)`);
  t.same(timer.waits, [1000], 'in one wait, not a busy loop');
});

t.test('a Retry-After longer than the longest wait fails the stage for a later retry', async (t) => {
  const server = await fakeServer(t, () => ({ status: 429, body: '{}', headers: { 'retry-after': '3600' } }));
  const geocoder = onlineGeocoder(
    options(server.url, { requestsPerSecond: 100, maxRetryAfterMs: 1000 }),
    memoryGeocodeCache(),
  );
  const error = await geocoder.geocode(['a']).catch((caught: unknown) => caught);
  t.match(error, { name: 'GeocoderHttpError', status: 429 });
  t.equal(server.seen.length, 1);
});

t.test('an address too long for a URL is not sent', async (t) => {
  const server = await fakeServer(t, () => ({ status: 200, body: nominatimPlace(1, 1, 0.9) }));
  const geocoder = onlineGeocoder(options(server.url, { requestsPerSecond: 100 }), memoryGeocodeCache());
  const long = 'Street '.repeat(200);
  const results = await geocoder.geocode([long]);
  t.same(results.get(long), { failure: 'address longer than 500 characters' });
  t.equal(server.seen.length, 0);
});

t.test('a Photon-compatible server', async (t) => {
  const server = await fakeServer(t, () => ({
    status: 200,
    body: JSON.stringify({
      type: 'FeatureCollection',
      features: [
        {
          geometry: { type: 'Point', coordinates: [6.95, 50.94] },
          properties: { name: 'Köln', countrycode: 'DE', state: 'Nordrhein-Westfalen' },
        },
      ],
    }),
  }));
  const geocoder = onlineGeocoder(
    options(server.url, { flavour: 'photon', requestsPerSecond: 100 }),
    memoryGeocodeCache(),
  );
  const results = await geocoder.geocode(['Köln']);
  t.equal(server.seen[0]?.path, '/api');
  t.match(results.get('Köln'), {
    location: { latitude: 50.94, longitude: 6.95 },
    match: { provider: `photon:${server.url}`, matchedName: 'Köln', matchedCountry: 'DE' },
  });
});

import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { permanent } from '../../domain/ingest/failures.ts';
import type { UrlFetcher } from '../../ports/url-fetcher.ts';
import { isForbiddenAddress } from '../security/forbidden-addresses.ts';

export { isForbiddenAddress };

// Fetches user-supplied URLs (scheduled imports) without letting them reach the service's own
// network: every address a host name resolves to is checked against private, loopback, link-local,
// multicast and reserved ranges, and the connection goes to the address that was checked (no second
// DNS answer to rebind to). Redirects are followed (at most 3) and checked again. The size limit
// applies while the body is read and the whole fetch has a deadline; where the body goes is the
// caller's (FileStore).

export type FetchLimits = { maxBytes: number; timeoutMs: number; allowPrivateAddresses: boolean };

const blockedError = (host: string, address: string) =>
  permanent('SSRF_BLOCKED', `${host} resolves to ${address}, a private or reserved address: not fetched`);

export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) return callback(error, '', 4);
      const bad = allowPrivate ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
      if (bad) return callback(blockedError(hostname, bad.address), '', 4);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

function request(url: URL, limits: FetchLimits, signal: AbortSignal): Promise<http.IncomingMessage> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !limits.allowPrivateAddresses && isForbiddenAddress(host)) {
    return Promise.reject(blockedError(host, host));
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, {
      lookup: guardedLookup(limits.allowPrivateAddresses),
      headers: { 'user-agent': 'chronomap-scheduled-import', accept: 'text/csv, */*' },
      signal,
    });
    req.on('response', resolve);
    req.on('error', reject);
  });
}

/** The response's chunks, refused once they pass the size limit; a deadline that passes while they arrive is a timeout. */
async function* limitedBody(
  response: http.IncomingMessage,
  url: URL,
  limits: FetchLimits,
  signal: AbortSignal,
): AsyncGenerator<Uint8Array> {
  let bytes = 0;
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > limits.maxBytes) {
        response.destroy();
        throw permanent('FILE_TOO_LARGE', `${url.host} sent more than the limit of ${limits.maxBytes} bytes`);
      }
      yield chunk;
    }
  } catch (error) {
    throw signal.aborted ? timeoutError(url, limits) : error;
  }
}

const timeoutError = (url: URL, limits: FetchLimits) =>
  Object.assign(new Error(`${url.host} did not send the file within ${limits.timeoutMs} ms`), {
    code: 'ETIMEDOUT',
  });

export function guardedUrlFetcher(limits: FetchLimits): UrlFetcher {
  return {
    async fetch(rawUrl) {
      const signal = AbortSignal.timeout(limits.timeoutMs);
      let url = new URL(rawUrl);
      try {
        for (let redirects = 0; ; redirects++) {
          const response = await request(url, limits, signal);
          const status = response.statusCode ?? 0;
          if (status >= 300 && status < 400 && response.headers.location) {
            response.resume();
            if (redirects >= 3)
              throw permanent('TOO_MANY_REDIRECTS', `${rawUrl} redirects more than 3 times`);
            url = new URL(response.headers.location, url);
            if (url.protocol !== 'http:' && url.protocol !== 'https:') {
              throw permanent('INVALID_FORMAT', `${rawUrl} redirects to a ${url.protocol} URL`);
            }
            continue;
          }
          if (status < 200 || status >= 300) {
            response.resume();
            throw Object.assign(
              new Error(`${url.host} answered ${status} ${response.statusMessage ?? ''}`.trim()),
              {
                status,
              },
            );
          }
          const declared = Number(response.headers['content-length']);
          if (Number.isFinite(declared) && declared > limits.maxBytes) {
            response.destroy();
            throw permanent(
              'FILE_TOO_LARGE',
              `${url.host} sends ${declared} bytes, over the limit of ${limits.maxBytes}`,
            );
          }
          const name = decodeURIComponent(url.pathname.split('/').pop() ?? '') || 'download.csv';
          return {
            body: limitedBody(response, url, limits, signal),
            contentType: response.headers['content-type'] ?? null,
            fileName: name.slice(0, 255),
            etag: response.headers.etag ?? null,
            lastModified: response.headers['last-modified'] ?? null,
          };
        }
      } catch (error) {
        if (signal.aborted) throw timeoutError(url, limits);
        throw error;
      }
    },
  };
}

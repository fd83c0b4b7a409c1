import dns from 'node:dns';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { permanent } from '../../domain/ingest/failures.ts';
import type { UrlFetcher } from '../../ports/schedule-store.ts';
import { isForbiddenAddress } from '../security/forbidden-addresses.ts';

export { isForbiddenAddress };

// Fetches user-supplied URLs (scheduled imports) without letting them reach the service's own
// network: every address a host name resolves to is checked against private, loopback, link-local,
// multicast and reserved ranges, and the connection goes to the address that was checked (no second
// DNS answer to rebind to). Redirects are followed (at most 3) and checked again. The size limit
// applies while streaming and the whole fetch has a deadline.

export type FetchLimits = { maxBytes: number; timeoutMs: number; allowPrivateAddresses: boolean };

const blockedError = (host: string, address: string) =>
  permanent('SSRF_BLOCKED', `${host} resolves to ${address}, a private or reserved address: not fetched`);

function guardedLookup(allowPrivate: boolean): LookupFunction {
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

export function guardedUrlFetcher(limits: FetchLimits, root: string): UrlFetcher {
  return {
    async fetchToFile(rawUrl, relative) {
      const destination = path.join(root, relative);
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
          await mkdir(path.dirname(destination), { recursive: true });
          let bytes = 0;
          const counter = new Transform({
            transform(chunk: Buffer, _encoding, callback) {
              bytes += chunk.length;
              if (bytes > limits.maxBytes) {
                callback(
                  permanent(
                    'FILE_TOO_LARGE',
                    `${url.host} sent more than the limit of ${limits.maxBytes} bytes`,
                  ),
                );
              } else callback(null, chunk);
            },
          });
          try {
            await pipeline(response, counter, createWriteStream(destination, { flags: 'wx' }));
          } catch (error) {
            await rm(destination, { force: true });
            throw error;
          }
          const name = decodeURIComponent(url.pathname.split('/').pop() ?? '') || 'download.csv';
          return {
            bytes,
            contentType: response.headers['content-type'] ?? null,
            fileName: name.slice(0, 255),
          };
        }
      } catch (error) {
        if (signal.aborted) {
          await rm(destination, { force: true });
          throw Object.assign(new Error(`${url.host} did not send the file within ${limits.timeoutMs} ms`), {
            code: 'ETIMEDOUT',
          });
        }
        throw error;
      }
    },
  };
}

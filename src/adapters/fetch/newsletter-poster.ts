import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { permanent } from '../../domain/ingest/failures.ts';
import type { NewsletterService } from '../../ports/site/site-settings.ts';
import { guardedLookup, isForbiddenAddress } from './guarded-url-fetcher.ts';

// Hands a newsletter subscription to the service an admin configured: one POST of
// `{"email": ...}` as JSON through the same SSRF guard as scheduled fetches (every address of the
// host checked, the connection made to the checked address), within a deadline. Redirects are not
// followed: a service that answers with one is refused, so a redirect to a private address reaches
// nothing.

type NewsletterLimits = { timeoutMs: number; allowPrivateAddresses: boolean };

const failure = (code: string, message: string) => permanent(code, message);

export function guardedNewsletterPoster(limits: NewsletterLimits): NewsletterService {
  return {
    async subscribe(serviceUrl, email) {
      const url = new URL(serviceUrl);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) && !limits.allowPrivateAddresses && isForbiddenAddress(host)) {
        throw failure('SSRF_BLOCKED', `${host} is a private or reserved address: not contacted`);
      }
      const body = JSON.stringify({ email });
      const client = url.protocol === 'https:' ? https : http;
      const signal = AbortSignal.timeout(limits.timeoutMs);
      const status = await new Promise<number>((resolve, reject) => {
        const request = client.request(url, {
          method: 'POST',
          lookup: guardedLookup(limits.allowPrivateAddresses),
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'chronomap-newsletter',
          },
          signal,
        });
        request.on('response', (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', (error) =>
          reject(
            signal.aborted
              ? failure(
                  'NEWSLETTER_TIMEOUT',
                  `the newsletter service did not answer within ${limits.timeoutMs} ms`,
                )
              : error,
          ),
        );
        request.end(body);
      });
      if (status >= 300 && status < 400) {
        throw failure(
          'NEWSLETTER_REDIRECT_REFUSED',
          `the newsletter service answered a redirect (${status}), not followed`,
        );
      }
      if (status < 200 || status >= 300) {
        throw failure('NEWSLETTER_REJECTED', `the newsletter service answered ${status}`);
      }
    },
  };
}

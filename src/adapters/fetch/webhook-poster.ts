import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { ValidationError } from '../../domain/errors.ts';
import type { WebhookSender } from '../../ports/subscriptions/webhook-sender.ts';
import { signedHeaders } from '../security/webhook-signature.ts';
import { guardedLookup, isForbiddenAddress } from './guarded-url-fetcher.ts';

// Outbound webhooks of subscriptions (issue 39 §2) through the SSRF guard of scheduled fetches:
// the URL's host is checked when the subscription is saved, and every address it resolves to is
// checked again at each send, the connection going to the address that was checked. Redirects are
// not followed (a 3xx is a failed attempt), so one cannot lead to a private address.

type WebhookLimits = { timeoutMs: number; allowPrivateAddresses: boolean; now?: () => number };

const MAX_ERROR_LENGTH = 500;
/** How long saving a subscription waits for its host's addresses. */
const DESTINATION_LOOKUP_MS = 3_000;

/** The host's addresses, or none when it does not resolve within `ms`. */
async function resolveWithin(host: string, ms: number): Promise<string[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), ms);
  });
  const lookedUp = dns.lookup(host, { all: true }).then(
    (found) => found.map((a) => a.address),
    () => [] as string[],
  );
  try {
    return await Promise.race([lookedUp, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export function guardedWebhookPoster(limits: WebhookLimits): WebhookSender {
  const now = limits.now ?? Date.now;
  return {
    async checkDestination(raw) {
      if (limits.allowPrivateAddresses) return;
      const host = new URL(raw).hostname.replace(/^\[|\]$/g, '');
      // A name that does not resolve (now, or within the bound) is accepted: every send checks the
      // addresses it connects to again (guardedLookup), so the bound only keeps the request short.
      const addresses = isIP(host) ? [host] : await resolveWithin(host, DESTINATION_LOOKUP_MS);
      const bad = addresses.find((address) => isForbiddenAddress(address));
      if (bad)
        throw new ValidationError(`${host} resolves to ${bad}, a private or reserved address`, {
          field: 'url',
          code: 'SSRF_BLOCKED',
        });
    },

    async send({ url: raw, secret, id, body }) {
      const started = now();
      const url = new URL(raw);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      const outcome = (statusCode: number | null, error: string | null) => ({
        statusCode,
        durationMs: Math.max(0, Math.round(now() - started)),
        error: error === null ? null : error.slice(0, MAX_ERROR_LENGTH),
      });
      if (isIP(host) && !limits.allowPrivateAddresses && isForbiddenAddress(host))
        return outcome(null, `${host} is a private or reserved address: not contacted`);
      const client = url.protocol === 'https:' ? https : http;
      const signal = AbortSignal.timeout(limits.timeoutMs);
      const headers = signedHeaders(secret, id, Math.floor(now() / 1000), body);
      return new Promise((resolve) => {
        const request = client.request(url, {
          method: 'POST',
          lookup: guardedLookup(limits.allowPrivateAddresses),
          headers: {
            ...headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'chronomap-webhook',
          },
          signal,
        });
        request.on('response', (response) => {
          response.resume();
          const status = response.statusCode ?? 0;
          resolve(
            outcome(
              status,
              status >= 200 && status < 300
                ? null
                : status >= 300 && status < 400
                  ? `the receiver answered a redirect (${status}), not followed`
                  : `the receiver answered ${status}`,
            ),
          );
        });
        request.on('error', (error) =>
          resolve(outcome(null, signal.aborted ? `no answer within ${limits.timeoutMs} ms` : error.message)),
        );
        request.end(body);
      });
    },
  };
}

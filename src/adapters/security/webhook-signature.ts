import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks signing (https://www.standardwebhooks.com, the spec the `standardwebhooks`
// package verifies): the secret is `whsec_` + base64 of random bytes; the signature is
// `v1,` + base64 of HMAC-SHA256, keyed with those bytes, over `${id}.${timestamp}.${body}`.
// Written here with node:crypto rather than with the package, which is a devDependency only
// (the tests verify with it, so the two are checked against each other).

const PREFIX = 'whsec_';

/** A new secret: 24 random bytes (192 bits), as Standard Webhooks writes them. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(24).toString('base64');
}

/** The three headers of one attempt of delivery `id` at `timestampSeconds`. */
export function signedHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}

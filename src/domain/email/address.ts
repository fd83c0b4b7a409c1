import { ValidationError } from '../errors.ts';

// An address a user adds: one mailbox, no display name, no header tricks (a CR/LF or a comma would
// let a crafted address add recipients or headers). Deliverability is what the confirmation proves.

const ADDRESS_PATTERN =
  /^[^\s@<>(),;:"\\[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function parseEmailAddress(value: unknown): string {
  const address = typeof value === 'string' ? value.trim() : '';
  if (address.length > 254 || !ADDRESS_PATTERN.test(address))
    throw new ValidationError('address must be one e-mail address such as name@example.org', {
      field: 'address',
    });
  return address;
}

/** Addresses one account may hold, and confirmation mails it may ask for in an hour. */
export const MAX_ADDRESSES_PER_ACCOUNT = 5;
export const CONFIRMATIONS_PER_HOUR = 5;

/** The stream of source-health alerts; a subscription's digests are `subscription:<id>`. */
export const SOURCE_HEALTH_STREAM = 'source-health';
export function subscriptionStream(subscriptionId: number): string {
  return `subscription:${subscriptionId}`;
}

import {
  CONFIRMATIONS_PER_HOUR,
  MAX_ADDRESSES_PER_ACCOUNT,
  parseEmailAddress,
} from '../../domain/email/address.ts';
import { CONFIRMATION_TTL_MS, parseEmailToken } from '../../domain/email/tokens.ts';
import { DomainError, NotFoundError } from '../../domain/errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type { EmailAddressView, EmailStore } from '../../ports/email/email-store.ts';
import type { EmailTokens } from '../../ports/email/email-tokens.ts';

// A user's e-mail addresses (double opt-in) and the public token routes. The caller is the session's
// user for the address routes (the account pages require one); the token is the authority for
// confirm and unsubscribe, and an unknown or malformed token is a 404 like any missing page.

export type EmailAddresses = {
  /** False without SMTP_URL: the pages say so and nothing is queued. */
  enabled: boolean;
  list(userId: number): Promise<EmailAddressView[]>;
  add(userId: number, address: unknown): Promise<void>;
  resend(userId: number, addressId: string): Promise<void>;
  remove(userId: number, addressId: string): Promise<void>;
  confirm(token: unknown): Promise<{ address: string }>;
  unsubscribeInfo(token: unknown): Promise<{ address: string; stream: string }>;
  unsubscribe(token: unknown): Promise<void>;
};

function disabled(): DomainError {
  return new DomainError('unavailable', 'E-mail is not configured on this server (SMTP_URL)', {
    code: 'email_disabled',
  });
}

function rateLimited(): DomainError {
  return new DomainError('rate_limited', `At most ${CONFIRMATIONS_PER_HOUR} confirmation mails an hour`, {
    code: 'email_rate_limited',
  });
}

function tokenHash(tokens: EmailTokens, token: unknown): Buffer {
  const parsed = parseEmailToken(token);
  if (parsed === null) throw new NotFoundError('No such link');
  return tokens.hash(parsed);
}

export function createEmailAddresses(deps: {
  store: EmailStore;
  clock: Clock;
  tokens: EmailTokens;
  enabled: boolean;
}): EmailAddresses {
  const { store, clock, tokens, enabled } = deps;
  const confirmation = () => {
    const { token, hash } = tokens.issue();
    return { token, hash, expiresAt: new Date(clock.now().getTime() + CONFIRMATION_TTL_MS) };
  };
  return {
    enabled,
    list: (userId) => store.list(userId),
    async add(userId, value) {
      const address = parseEmailAddress(value);
      if (!enabled) throw disabled();
      const outcome = await store.add(userId, address, confirmation(), {
        maxAddresses: MAX_ADDRESSES_PER_ACCOUNT,
        confirmationsPerHour: CONFIRMATIONS_PER_HOUR,
      });
      if (outcome === 'exists')
        throw new DomainError('conflict', 'This address is already on the account', { code: 'email_exists' });
      if (outcome === 'too-many')
        throw new DomainError(
          'quota_exceeded',
          `At most ${MAX_ADDRESSES_PER_ACCOUNT} addresses per account`,
          {
            code: 'email_addresses_quota',
          },
        );
      if (outcome === 'rate-limited') throw rateLimited();
    },
    async resend(userId, addressId) {
      if (!enabled) throw disabled();
      const outcome = await store.resend(userId, addressId, confirmation(), CONFIRMATIONS_PER_HOUR);
      if (outcome === 'not-found') throw new NotFoundError('No such unconfirmed address');
      if (outcome === 'rate-limited') throw rateLimited();
    },
    async remove(userId, addressId) {
      if (!(await store.remove(userId, addressId))) throw new NotFoundError('No such address');
    },
    async confirm(token) {
      const confirmed = await store.confirm(tokenHash(tokens, token));
      if (!confirmed) throw new NotFoundError('This confirmation link is unknown, used or expired');
      return confirmed;
    },
    async unsubscribeInfo(token) {
      const found = await store.findUnsubscribe(tokenHash(tokens, token));
      if (!found) throw new NotFoundError('No such link');
      return found;
    },
    async unsubscribe(token) {
      if (!(await store.unsubscribe(tokenHash(tokens, token)))) throw new NotFoundError('No such link');
    },
  };
}

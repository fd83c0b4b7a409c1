import type { CommonQueryMethods } from 'slonik';
import { Type } from 'typebox';
import { SOURCE_HEALTH_STREAM } from '../../../domain/email/address.ts';
import type { MailPayload } from '../../../domain/email/messages.ts';
import { sha256EmailTokens } from '../../security/email-tokens.ts';
import type { EmailStore, OutboxMail } from '../../../ports/email/email-store.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { isUuid } from '../../../domain/uuid.ts';

// Addresses, tokens and the outbox (migration 0950). A mail is queued in the caller's transaction;
// only a confirmed address that has not left the mail's stream gets a row.

type Queued = {
  userId: number;
  addressId: string | null;
  to: string;
  stream: string | null;
  payload: MailPayload;
};

async function queueMail(tx: CommonQueryMethods, mail: Queued): Promise<void> {
  await tx.query(sql.unsafe`
    insert into email_outbox (user_id, email_address_id, to_address, kind, stream, payload)
    values (${mail.userId}, ${mail.addressId}, ${mail.to}, ${mail.payload.kind}, ${mail.stream},
            ${sql.jsonb(mail.payload as never)})`);
}

/** A fresh unsubscribe token for one mail of `stream` to the address; only its hash is kept. */
async function unsubscribeToken(tx: CommonQueryMethods, addressId: string, stream: string): Promise<string> {
  const { token, hash } = sha256EmailTokens.issue();
  await tx.query(sql.unsafe`
    insert into email_unsubscribe_tokens (token_hash, email_address_id, stream)
    values (${sql.binary(hash)}, ${addressId}, ${stream})`);
  return token;
}

const Recipient = Type.Object({ id: Type.String(), address: Type.String() });

/** Confirmed addresses of the user still receiving `stream`, locked against a concurrent removal. */
async function recipients(tx: CommonQueryMethods, userId: number, stream: string, addressId?: string) {
  return tx.any(sql.type(row(Recipient))`
    select a.id::text as id, a.address from email_addresses a
    where a.user_id = ${userId} and a.confirmed_at is not null
      ${addressId === undefined ? sql.fragment`` : sql.fragment`and a.id::text = ${addressId}`}
      and not exists (select 1 from email_suppressions s where s.email_address_id = a.id and s.stream = ${stream})
    for share of a`);
}

/**
 * A source's streak reached its threshold (recordRunHealth, in the transaction writing the account
 * notice): one alert to each confirmed address of the owner that has not left the stream.
 */
export async function queueSourceHealthMails(
  tx: CommonQueryMethods,
  userId: number,
  message: string,
): Promise<void> {
  for (const to of await recipients(tx, userId, SOURCE_HEALTH_STREAM)) {
    const token = await unsubscribeToken(tx, to.id, SOURCE_HEALTH_STREAM);
    await queueMail(tx, {
      userId,
      addressId: to.id,
      to: to.address,
      stream: SOURCE_HEALTH_STREAM,
      payload: { kind: 'source-health', message, unsubscribeToken: token },
    });
  }
}

const Count = Type.Object({ n: Type.Number() });

async function confirmationsInLastHour(tx: CommonQueryMethods, userId: number): Promise<number> {
  return tx.oneFirst(sql.type(row(Count))`
    select count(*)::int as n from email_outbox
    where user_id = ${userId} and kind = 'confirm' and created_at > now() - interval '1 hour'`);
}

const AddressRow = Type.Object({
  id: Type.String(),
  address: Type.String(),
  confirmed: Type.Boolean(),
  status: Nullable(
    Type.Union([
      Type.Literal('queued'),
      Type.Literal('sending'),
      Type.Literal('sent'),
      Type.Literal('failed'),
    ]),
  ),
  error: Nullable(Type.String()),
});

const OutboxRow = Type.Object({
  id: Type.String(),
  to: Type.String(),
  attempts: Type.Number(),
  payload: Type.Unknown(),
  lease: Type.String(),
});
const Found = Type.Object({ address: Type.String(), stream: Type.String() });

export function createEmailStore(pool: DatabasePool): EmailStore {
  return {
    async list(userId) {
      const rows = await pool.any(sql.type(row(AddressRow))`
        select a.id::text as id, a.address, a.confirmed_at is not null as confirmed, m.status, m.last_error as error
        from email_addresses a
        left join lateral (select status, last_error from email_outbox o where o.email_address_id = a.id
                           order by o.id desc limit 1) m on true
        where a.user_id = ${userId} order by a.created_at, a.id`);
      return rows.map((r) => ({
        id: r.id,
        address: r.address,
        confirmed: r.confirmed,
        lastMail: r.status === null ? null : { status: r.status, error: r.error },
      }));
    },

    async add(userId, address, confirmation, limits) {
      return pool.transaction(async (tx) => {
        // One account's additions in turn, so two at once cannot both pass the limits.
        await tx.query(
          sql.unsafe`select pg_advisory_xact_lock(hashtextextended('email:' || ${userId}::text, 0))`,
        );
        const held = await tx.oneFirst(sql.type(row(Count))`
          select count(*)::int as n from email_addresses where user_id = ${userId}`);
        const exists = await tx.exists(sql.unsafe`
          select 1 from email_addresses where user_id = ${userId} and lower(address) = lower(${address})`);
        if (exists) return 'exists' as const;
        if (held >= limits.maxAddresses) return 'too-many' as const;
        if ((await confirmationsInLastHour(tx, userId)) >= limits.confirmationsPerHour)
          return 'rate-limited' as const;
        const id = await tx.oneFirst(sql.type(row(Type.Object({ id: Type.String() })))`
          insert into email_addresses (user_id, address, confirm_token_hash, confirm_expires_at)
          values (${userId}, ${address}, ${sql.binary(confirmation.hash)}, ${confirmation.expiresAt.toISOString()})
          returning id::text as id`);
        await queueMail(tx, {
          userId,
          addressId: id,
          to: address,
          stream: null,
          payload: { kind: 'confirm', address, token: confirmation.token },
        });
        return 'added' as const;
      });
    },

    async resend(userId, addressId, confirmation, confirmationsPerHour) {
      if (!isUuid(addressId)) return 'not-found';
      return pool.transaction(async (tx) => {
        await tx.query(
          sql.unsafe`select pg_advisory_xact_lock(hashtextextended('email:' || ${userId}::text, 0))`,
        );
        const address = await tx.maybeOneFirst(sql.type(row(Type.Object({ address: Type.String() })))`
          select address from email_addresses
          where id = ${addressId} and user_id = ${userId} and confirmed_at is null for update`);
        if (address === null) return 'not-found' as const;
        if ((await confirmationsInLastHour(tx, userId)) >= confirmationsPerHour)
          return 'rate-limited' as const;
        // The new link replaces the old one: only the latest mail confirms.
        await tx.query(sql.unsafe`
          update email_addresses set confirm_token_hash = ${sql.binary(confirmation.hash)},
                 confirm_expires_at = ${confirmation.expiresAt.toISOString()} where id = ${addressId}`);
        await queueMail(tx, {
          userId,
          addressId,
          to: address,
          stream: null,
          payload: { kind: 'confirm', address, token: confirmation.token },
        });
        return 'queued' as const;
      });
    },

    async remove(userId, addressId) {
      if (!isUuid(addressId)) return false;
      const result = await pool.query(sql.unsafe`
        delete from email_addresses where id = ${addressId} and user_id = ${userId}`);
      return result.rowCount > 0;
    },

    async confirm(tokenHash) {
      return pool.maybeOne(sql.type(row(Type.Object({ address: Type.String() })))`
        update email_addresses set confirmed_at = now(), confirm_token_hash = null, confirm_expires_at = null
        where confirm_token_hash = ${sql.binary(tokenHash)} and confirm_expires_at > now()
        returning address`);
    },

    async findUnsubscribe(tokenHash) {
      return pool.maybeOne(sql.type(row(Found))`
        select a.address, t.stream from email_unsubscribe_tokens t
        join email_addresses a on a.id = t.email_address_id where t.token_hash = ${sql.binary(tokenHash)}`);
    },

    async unsubscribe(tokenHash) {
      // Idempotent: a mail client that posts twice, or a second click, is still a success.
      const result = await pool.query(sql.unsafe`
        insert into email_suppressions (email_address_id, stream)
        select email_address_id, stream from email_unsubscribe_tokens where token_hash = ${sql.binary(tokenHash)}
        on conflict do nothing`);
      if (result.rowCount > 0) return true;
      return pool.exists(
        sql.unsafe`select 1 from email_unsubscribe_tokens where token_hash = ${sql.binary(tokenHash)}`,
      );
    },

    async queueDigest(userId, addressId, stream, payload) {
      if (!isUuid(addressId)) return 'address-not-confirmed';
      return pool.transaction(async (tx) => {
        const [to] = await recipients(tx, userId, stream, addressId);
        if (!to) return 'address-not-confirmed' as const;
        const token = await unsubscribeToken(tx, to.id, stream);
        await queueMail(tx, { userId, addressId: to.id, to: to.address, stream, payload: payload(token) });
        return 'queued' as const;
      });
    },

    async claim(leaseMs) {
      const claimed = await pool.maybeOne(sql.type(row(OutboxRow))`
        update email_outbox o set status = 'sending', attempts = attempts + 1,
               next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
        where o.id = (select id from email_outbox where status in ('queued', 'sending') and next_attempt_at <= now()
                      order by next_attempt_at, id for update skip locked limit 1)
        returning o.id::text as id, o.to_address as "to", o.attempts, o.payload, o.next_attempt_at::text as lease`);
      return claimed as OutboxMail | null;
    },

    // Only while the claim still holds the mail (its lease, next_attempt_at, unchanged): a claim
    // taken over by another sender after its lease ended records nothing.
    async sent({ id, lease }) {
      await pool.query(sql.unsafe`
        update email_outbox set status = 'sent', sent_at = now(), payload = null, last_error = null
        where id = ${id} and status = 'sending' and next_attempt_at = ${lease}::timestamptz`);
    },

    async failed({ id, lease }, error, retryAt) {
      await pool.query(sql.unsafe`
        update email_outbox set status = ${retryAt === null ? 'failed' : 'queued'}, last_error = ${error.slice(0, 2000)},
               next_attempt_at = ${(retryAt ?? new Date()).toISOString()},
               payload = ${retryAt === null ? null : sql.fragment`payload`}
        where id = ${id} and status = 'sending' and next_attempt_at = ${lease}::timestamptz`);
    },

    async recentStatus() {
      const Seconds = Type.Union([Type.Number(), Type.Null()]);
      const facts = await pool.one(sql.type(
        row(
          Type.Object({
            sent: Type.Number(),
            failed: Type.Number(),
            retrying: Type.Number(),
            queued: Type.Number(),
            oldest_queued: Seconds,
            oldest_due: Seconds,
          }),
        ),
      )`
        select count(*) filter (where status = 'sent')::int as sent,
               count(*) filter (where status = 'failed')::int as failed,
               count(*) filter (where status in ('queued', 'sending') and attempts > 0 and last_error is not null)::int as retrying,
               (select count(*)::int from email_outbox where status in ('queued', 'sending')) as queued,
               (select extract(epoch from now() - min(created_at))::float8
                  from email_outbox where status in ('queued', 'sending')) as oldest_queued,
               -- A claimed mail's next_attempt_at is its lease's end: past it, it is due again.
               (select extract(epoch from now() - min(next_attempt_at))::float8
                  from email_outbox where status in ('queued', 'sending') and next_attempt_at <= now()) as oldest_due
        from email_outbox where created_at > now() - interval '1 hour'`);
      return {
        sent: facts.sent,
        failed: facts.failed,
        retrying: facts.retrying,
        queued: facts.queued,
        oldestQueuedSeconds: facts.oldest_queued,
        oldestDueSeconds: facts.oldest_due,
      };
    },
  };
}

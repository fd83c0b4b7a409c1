import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { SubscriptionStore } from '../../../ports/subscriptions/subscription-store.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { postgresDeliveryQueue } from './delivery-queue.ts';
import {
  FILTER_COLUMN_NAMES,
  SUBSCRIPTION_COLUMNS,
  SubscriptionRow,
  filterValues,
  subscriptionOf,
} from './subscription-rows.ts';

// Subscriptions on PostgreSQL (migration 0940_subscriptions.sql): the owner's list, and the
// delivery log. Matching and delivering are the delivery queue's (delivery-queue.ts).

const LogRow = Type.Object({
  delivery_id: Type.String(),
  kind: Type.Union([Type.Literal('changes'), Type.Literal('test')]),
  attempt: Type.Number(),
  status_code: Nullable(Type.Number()),
  duration_ms: Type.Number(),
  error: Nullable(Type.String()),
  attempted_at: Type.String(),
});

/** A delivery id as Standard Webhooks writes them (`msg_` and a unique part). */
const newDeliveryId = () => `msg_${randomUUID().replaceAll('-', '')}`;

export function postgresSubscriptionStore(pool: DatabasePool): SubscriptionStore {
  const find = async (id: number) => {
    const found = await pool.maybeOne(
      sql.type(row(SubscriptionRow))`select ${SUBSCRIPTION_COLUMNS} from subscriptions s where s.id = ${id}`,
    );
    return found ? subscriptionOf(found) : null;
  };
  return {
    ...postgresDeliveryQueue(pool),
    async create(ownerId, apiKeyId, fields, secret, limit) {
      return pool.transaction(async (tx) => {
        // The owner's row is locked so that two creations at once cannot both pass the quota.
        await tx.query(sql.unsafe`select 1 from users where id = ${ownerId} for update`);
        const count = await tx.oneFirst(
          sql.type(row(Type.Object({ n: Type.Number() })))`
            select count(*)::int as n from subscriptions where owner_id = ${ownerId}`,
        );
        if (count >= limit) return null;
        const channel = fields.channel;
        const id = await tx.oneFirst(sql.type(row(Type.Object({ id: Type.Number() })))`
          insert into subscriptions (owner_id, api_key_id, view_code, name, channel, url, secret,
                                     email_address_id, ${FILTER_COLUMN_NAMES})
          values (${ownerId}, ${apiKeyId}, ${fields.viewCode}, ${fields.name}, ${channel.kind},
                  ${channel.kind === 'webhook' ? channel.url : null}, ${secret},
                  ${channel.kind === 'email' ? channel.emailAddressId : null}, ${filterValues(fields.filter)})
          returning id`);
        const created = await tx.one(
          sql.type(
            row(SubscriptionRow),
          )`select ${SUBSCRIPTION_COLUMNS} from subscriptions s where s.id = ${id}`,
        );
        return subscriptionOf(created);
      });
    },
    find,
    async listByOwner(ownerId) {
      const rows = await pool.any(sql.type(row(SubscriptionRow))`
        select ${SUBSCRIPTION_COLUMNS} from subscriptions s where s.owner_id = ${ownerId}
        order by s.created_at desc, s.id desc`);
      return rows.map(subscriptionOf);
    },
    async update(id, changes) {
      const sets = [sql.fragment`updated_at = now()`];
      if (changes.name !== undefined) sets.push(sql.fragment`name = ${changes.name}`);
      if (changes.url !== undefined) sets.push(sql.fragment`url = ${changes.url}`);
      if (changes.emailAddressId !== undefined)
        sets.push(sql.fragment`email_address_id = ${changes.emailAddressId}`);
      if (changes.filter !== undefined)
        sets.push(sql.fragment`(${FILTER_COLUMN_NAMES}) = (select ${filterValues(changes.filter)})`);
      // Re-enabling starts the count of failures again.
      if (changes.enabled === true)
        sets.push(sql.fragment`enabled = true, consecutive_failures = 0, disabled_reason = null`);
      if (changes.enabled === false)
        sets.push(sql.fragment`enabled = false, disabled_reason = 'disabled by its owner'`);
      // One transaction: the update, and when it enables a disabled subscription, its notice dismissed
      // and the deliveries of the failure streak that disabled it (given up after its last delivered
      // one) sent again; what was stored while it was disabled was never matched to it. Enabling an
      // enabled subscription replays nothing.
      const updated = await pool.transaction(async (connection) => {
        const found = await connection.maybeOne(sql.type(row(Type.Object({ was_enabled: Type.Boolean() })))`
          with before as (select id, enabled from subscriptions where id = ${id} for update)
          update subscriptions s set ${sql.join(sets, sql.fragment`, `)}
          from before where s.id = before.id returning before.enabled as was_enabled`);
        if (!found || changes.enabled !== true || found.was_enabled) return found !== null;
        await connection.query(sql.unsafe`
          update account_notices set dismissed_at = now()
          where subscription_id = ${id} and dismissed_at is null`);
        await connection.query(sql.unsafe`
          update subscription_deliveries
          set status = 'pending', attempts = 0, next_attempt_at = now(), leased_until = null, finished_at = null
          where subscription_id = ${id} and status = 'failed' and kind = 'changes'
            and finished_at > coalesce((select max(d.finished_at) from subscription_deliveries d
                                        where d.subscription_id = ${id} and d.status = 'delivered'), '-infinity')`);
        return true;
      });
      return updated ? find(id) : null;
    },
    async remove(id) {
      const done = await pool.query(sql.unsafe`delete from subscriptions where id = ${id}`);
      return done.rowCount > 0;
    },
    async queueTest(id) {
      const deliveryId = newDeliveryId();
      await pool.query(sql.unsafe`
        insert into subscription_deliveries (id, subscription_id, kind) values (${deliveryId}, ${id}, 'test')`);
      return deliveryId;
    },
    async deliveryLog(id, limit) {
      const rows = await pool.any(sql.type(row(LogRow))`
        select a.delivery_id, coalesce(d.kind, 'changes') as kind, a.attempt, a.status_code, a.duration_ms,
               a.error, to_char(a.attempted_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as attempted_at
        from subscription_attempts a left join subscription_deliveries d on d.id = a.delivery_id
        where a.subscription_id = ${id} order by a.id desc limit ${limit}`);
      return rows.map((r) => ({
        deliveryId: r.delivery_id,
        kind: r.kind,
        attempt: r.attempt,
        statusCode: r.status_code,
        durationMs: r.duration_ms,
        error: r.error,
        attemptedAt: r.attempted_at,
      }));
    },
  };
}

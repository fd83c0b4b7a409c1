import type { DatabaseTransactionConnection as DatabaseTransaction } from 'slonik';
import { Type } from 'typebox';
import type { Role, TrustLevel } from '../../../domain/accounts/users.ts';
import { DELIVERY_LOG_SIZE } from '../../../domain/subscriptions/subscriptions.ts';
import type { DueDelivery, SubscriptionStore } from '../../../ports/subscriptions/subscription-store.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { SUBSCRIPTION_COLUMNS, SubscriptionRow, subscriptionOf } from './subscription-rows.ts';

// Matching and delivering (issue 39 §2, §5) on PostgreSQL. matchNextBatch reads the next batch of
// event_changes past the cursor, below the feed's visibility fence (pg_snapshot_xmin: every
// transaction below it has ended, so nothing can appear behind the cursor later) and in the feed's
// order (txid, seq), that is in the order the changes were stored, not by the event's time. The
// batch is matched against every enabled subscription in one statement: the boxed ones through
// the GiST index on their box (one index probe per changed event), the others by catalog and
// dataset; changes in datasets that no enabled subscription names are passed over without reading
// their events (an import on a site without subscriptions had every stored event read again beside
// its writers: docs/performance.md, "create-events at its one-statement limit"). The deliveries are
// written and the cursor moved in the same transaction, so a process killed at any point either
// matched a batch fully or not at all; a delivery is then sent until it succeeds or is given up,
// under one id.

const BatchRow = row(
  Type.Object({
    changes: Type.Number(),
    last_txid: Nullable(Type.String()),
    last_seq: Nullable(Type.String()),
  }),
);

const ClaimRow = Type.Object({
  delivery_id: Type.String(),
  kind: Type.Union([Type.Literal('changes'), Type.Literal('test')]),
  attempts: Type.Number(),
  changes: Type.Array(Type.Tuple([Type.String(), Type.String()])),
  user_email: Type.String(),
  user_role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
  user_trust: Type.Number(),
  key_scope: Nullable(Type.Union([Type.Literal('read'), Type.Literal('write')])),
  key_catalogs: Nullable(Type.Array(Type.Number())),
  key_revoked: Nullable(Type.Boolean()),
  lease: Type.String(),
});

const DisableRow = Type.Object({
  owner_id: Type.Number(),
  name: Type.String(),
  just_disabled: Type.Boolean(),
});

const MATCH_CONDITIONS = sql.fragment`
  x.stored_at >= s.created_at
  and (s.catalog is null or s.catalog = x.catalog_slug)
  and (cardinality(s.datasets) = 0 or s.datasets @> array[x.dataset_slug])
  and (s.starts_at is null or x.event_timestamp >= s.starts_at)
  and (s.ends_at is null or x.event_timestamp < s.ends_at)`;

export function postgresDeliveryQueue(
  pool: DatabasePool,
): Pick<SubscriptionStore, 'matchNextBatch' | 'claimDue' | 'recordAttempts'> {
  return {
    async matchNextBatch(batchSize, deliveryBatch) {
      return pool.transaction(async (tx) => {
        // One matcher at a time per group: a second waits here and then reads past the first's batch.
        const cursor = await tx.one(sql.type(row(Type.Object({ txid: Type.String(), seq: Type.String() })))`
          select txid::text as txid, seq::text as seq from subscription_cursors where group_id = 0 for update`);
        const done = await tx.one(sql.type(BatchRow)`
          with batch as materialized (
            select ch.txid, ch.seq, ch.kind, ch.event_id, ch.dataset_id, ch.stored_at from event_changes ch
            where ch.txid < pg_snapshot_xmin(pg_current_snapshot())
              and (ch.txid, ch.seq) > (${cursor.txid}::xid8, ${cursor.seq}::int8)
            order by ch.txid, ch.seq limit ${batchSize}),
          -- The batch's datasets that an enabled subscription names (by its catalog and datasets):
          -- only their changes are looked up in events. An import into a dataset nobody subscribed
          -- to, or any import on a site without subscriptions, costs the matcher no event look-up.
          watched as materialized (
            select d.id as dataset_id, d.slug as dataset_slug, c.slug as catalog_slug
            from (select distinct dataset_id from batch) bd
            join datasets d on d.id = bd.dataset_id
            join catalogs c on c.id = d.catalog_id
            where exists (select 1 from subscriptions s
                          where s.enabled and (s.catalog is null or s.catalog = c.slug)
                            and (cardinality(s.datasets) = 0 or s.datasets @> array[d.slug]))),
          -- Materialized, so that the events are joined only after this filter, whatever the
          -- planner estimates for the CTEs above.
          candidates as materialized (
            select b.txid, b.seq, b.kind, b.event_id, b.stored_at, w.dataset_slug, w.catalog_slug
            from batch b join watched w on w.dataset_id = b.dataset_id),
          changed as materialized (
            select b.txid, b.seq, b.kind, b.stored_at, b.dataset_slug, b.catalog_slug,
                   e.location, e.event_timestamp
            from candidates b
            left join events e on e.id = b.event_id and b.kind <> 'deleted'
            where b.kind = 'deleted' or e.id is not null),
          matched as (
            select s.id as subscription_id, x.txid, x.seq
            from changed x join subscriptions s
              on s.enabled and s.bounds is not null and s.bounds && x.location
                 and st_intersects(s.bounds, x.location)
            where x.kind <> 'deleted' and ${MATCH_CONDITIONS}
            union all
            -- Without a box: by catalog and dataset. A deletion has no place or time left to test,
            -- so it goes to the subscriptions without a box or dates that cover its dataset.
            select s.id, x.txid, x.seq
            from changed x join subscriptions s on s.enabled and s.bounds is null
            where ${MATCH_CONDITIONS}
              and (x.kind <> 'deleted' or (s.starts_at is null and s.ends_at is null))),
          chunks as (
            select m.subscription_id, m.txid, m.seq,
                   (row_number() over (partition by m.subscription_id order by m.txid, m.seq) - 1)
                     / ${deliveryBatch} as chunk
            from matched m),
          queued as (
            insert into subscription_deliveries (id, subscription_id, kind, changes)
            select 'msg_' || replace(gen_random_uuid()::text, '-', ''), subscription_id, 'changes',
                   jsonb_agg(jsonb_build_array(txid::text, seq::text) order by txid, seq)
            from chunks group by subscription_id, chunk
            returning 1)
          select (select count(*)::int from batch) as changes,
                 last.txid::text as last_txid, last.seq::text as last_seq
          from (select (select count(*) from queued) as queued) q
          left join lateral (select txid, seq from batch order by txid desc, seq desc limit 1) last on true`);
        if (done.last_txid !== null && done.last_seq !== null)
          await tx.query(sql.unsafe`
            update subscription_cursors set txid = ${done.last_txid}::xid8, seq = ${done.last_seq}::int8,
                   matched_at = now()
            where group_id = 0`);
        return done.changes;
      });
    },

    async claimDue(limit, leaseMs) {
      const claimed = await pool.any(sql.type(row(ClaimRow))`
        with due as (
          select d.id from subscription_deliveries d
          join subscriptions s on s.id = d.subscription_id and (s.enabled or d.kind = 'test')
          where d.status = 'pending' and d.next_attempt_at <= now()
            and (d.leased_until is null or d.leased_until < now())
          -- A subscription's deliveries of one matched batch share their times: their first
          -- change's position in the feed keeps them in the order they were queued.
          order by d.next_attempt_at, d.created_at, (d.changes->0->>0)::numeric, (d.changes->0->>1)::numeric
          limit ${limit} for update of d skip locked),
        leased as (
          update subscription_deliveries d set leased_until = now() + ${leaseMs} * interval '1 millisecond'
          from due where d.id = due.id
          returning d.id, d.kind, d.attempts, d.changes, d.subscription_id, d.leased_until)
        select l.id as delivery_id, l.kind, l.attempts, l.changes, l.leased_until::text as lease,
               u.email as user_email, u.role as user_role, u.trust_level::int as user_trust,
               k.scope as key_scope, k.catalog_ids as key_catalogs, (k.revoked_at is not null) as key_revoked
        from leased l
        join subscriptions s on s.id = l.subscription_id
        join users u on u.id = s.owner_id
        left join api_keys k on k.id = s.api_key_id`);
      if (claimed.length === 0) return [];
      const ids = claimed.map((c) => c.delivery_id);
      const subscriptions = await pool.any(sql.type(row(SubscriptionRow))`
        select ${SUBSCRIPTION_COLUMNS}, d.id as delivery_id
        from subscription_deliveries d join subscriptions s on s.id = d.subscription_id
        where d.id = any(${sql.array(ids, 'text')})`);
      const byDelivery = new Map(
        subscriptions.map((s) => [(s as unknown as { delivery_id: string }).delivery_id, subscriptionOf(s)]),
      );
      return claimed.flatMap((c): DueDelivery[] => {
        const subscription = byDelivery.get(c.delivery_id);
        if (!subscription) return [];
        const revoked = c.key_revoked === true;
        const owner = revoked
          ? null
          : {
              id: subscription.ownerId,
              email: c.user_email,
              role: c.user_role as Role,
              trustLevel: c.user_trust as TrustLevel,
              ...(subscription.apiKeyId !== null && c.key_scope !== null
                ? { key: { id: subscription.apiKeyId, scope: c.key_scope, catalogIds: c.key_catalogs } }
                : {}),
            };
        return [
          {
            id: c.delivery_id,
            kind: c.kind,
            attempts: c.attempts,
            subscription,
            owner,
            changes: c.changes.map(([txid, seq]) => ({ txid: BigInt(txid), seq: BigInt(seq) })),
            lease: c.lease,
          },
        ];
      });
    },

    async recordAttempts(claimed, disableAfter) {
      if (claimed.length === 0) return 0;
      return pool.transaction(async (tx) => {
        // Only the deliveries that still hold their claim's lease (locked until the end): one whose
        // lease ended and that another worker claimed again is that claim's to record.
        const held = new Set(
          await tx.anyFirst(sql.type(row(Type.Object({ id: Type.String() })))`
            select d.id from subscription_deliveries d
            join unnest(${sql.array(
              claimed.map((r) => r.delivery.id),
              'text',
            )}, ${sql.array(
              claimed.map((r) => r.delivery.lease),
              'text',
            )}) r(id, lease) on d.id = r.id
            where d.leased_until = r.lease::timestamptz
            for update of d`),
        );
        const kept = claimed.filter((r) => held.has(r.delivery.id));
        // Released unsent (the claim's time ran out before their turn): due again for the next claim.
        const released = kept.filter((r) => r.next.kind === 'released').map((r) => r.delivery.id);
        if (released.length > 0)
          await tx.query(sql.unsafe`
            update subscription_deliveries set leased_until = null where id = any(${sql.array(released, 'text')})`);
        const records = kept.filter((r) => r.next.kind !== 'released');
        if (records.length === 0) return claimed.length - kept.length;
        const tried = records.filter((r) => r.next.kind !== 'dropped');
        const column = <T>(list: typeof records, pick: (r: (typeof records)[number]) => T) => list.map(pick);
        if (tried.length > 0)
          await tx.query(sql.unsafe`
            insert into subscription_attempts (subscription_id, delivery_id, attempt, status_code, duration_ms, error)
            select * from unnest(${sql.array(
              column(tried, (r) => r.delivery.subscription.id),
              'int8',
            )},
                                 ${sql.array(
                                   column(tried, (r) => r.delivery.id),
                                   'text',
                                 )},
                                 ${sql.array(
                                   column(tried, (r) => r.delivery.attempts + 1),
                                   'int4',
                                 )},
                                 ${sql.array(
                                   column(tried, (r) => r.outcome.statusCode),
                                   'int4',
                                 )},
                                 ${sql.array(
                                   column(tried, (r) => r.outcome.durationMs),
                                   'int4',
                                 )},
                                 ${sql.array(
                                   column(tried, (r) => r.outcome.error),
                                   'text',
                                 )})`);
        await tx.query(sql.unsafe`
          update subscription_deliveries d
          set status = r.status, attempts = r.attempts, leased_until = null,
              next_attempt_at = coalesce(r.retry_at, d.next_attempt_at),
              finished_at = case when r.status = 'pending' then null else now() end
          from unnest(${sql.array(
            column(records, (r) => r.delivery.id),
            'text',
          )},
                      ${sql.array(column(records, statusOf), 'text')},
                      ${sql.array(
                        column(records, (r) => r.delivery.attempts + 1),
                        'int4',
                      )},
                      ${sql.array(column(records, retryAtOf), 'timestamptz')}) r(id, status, attempts, retry_at)
          where d.id = r.id`);
        // A test delivery tells the owner whether the receiver works; it does not count for or
        // against it. A subscription with a failure among these is counted attempt by attempt, in
        // order; the others that delivered start their count again, in one statement.
        const counted = records.filter((r) => r.delivery.kind === 'changes' && r.next.kind !== 'dropped');
        const failing = new Set(
          counted.filter((r) => r.next.kind !== 'delivered').map((r) => r.delivery.subscription.id),
        );
        const reset = [...new Set(counted.map((r) => r.delivery.subscription.id))].filter(
          (id) => !failing.has(id),
        );
        if (reset.length > 0)
          await tx.query(sql.unsafe`
            update subscriptions set consecutive_failures = 0
            where id = any(${sql.array(reset, 'int8')}) and consecutive_failures <> 0`);
        for (const r of counted.filter((c) => failing.has(c.delivery.subscription.id)))
          await countAttempt(
            tx,
            r.delivery.subscription.id,
            r.outcome.error,
            r.next.kind === 'delivered',
            disableAfter,
          );
        // The log stays bounded: the last DELIVERY_LOG_SIZE attempts, and as many finished deliveries.
        const ids = sql.array([...new Set(records.map((r) => r.delivery.subscription.id))], 'int8');
        await tx.query(sql.unsafe`
          delete from subscription_attempts a using (
            select s.id, (select id from subscription_attempts where subscription_id = s.id
                          order by id desc offset ${DELIVERY_LOG_SIZE} limit 1) as cut
            from unnest(${ids}) s(id)) c
          where a.subscription_id = c.id and a.id <= c.cut`);
        await tx.query(sql.unsafe`
          delete from subscription_deliveries d using (
            select s.id, (select created_at from subscription_deliveries
                          where subscription_id = s.id and status <> 'pending'
                          order by created_at desc offset ${DELIVERY_LOG_SIZE} limit 1) as cut
            from unnest(${ids}) s(id)) c
          where d.subscription_id = c.id and d.status <> 'pending' and d.created_at <= c.cut`);
        return claimed.length - kept.length;
      });
    },
  };
}

type AttemptRecord = Parameters<SubscriptionStore['recordAttempts']>[0][number];

const statusOf = (r: AttemptRecord): string => (r.next.kind === 'retry' ? 'pending' : r.next.kind);
const retryAtOf = (r: AttemptRecord): string | null =>
  r.next.kind === 'retry' ? r.next.at.toISOString() : null;

/**
 * One counted attempt of a subscription's changes: a delivery starts the count of failures in a row
 * again; a failure adds one, and the one that reaches `disableAfter` disables the subscription with
 * a notice to its owner.
 */
async function countAttempt(
  tx: DatabaseTransaction,
  subscriptionId: number,
  error: string | null,
  delivered: boolean,
  disableAfter: number,
): Promise<void> {
  if (delivered) {
    await tx.query(
      sql.unsafe`update subscriptions set consecutive_failures = 0 where id = ${subscriptionId}`,
    );
    return;
  }
  const reason = `${disableAfter} delivery attempts in a row failed (last: ${error ?? 'no answer'})`;
  const after = await tx.one(sql.type(row(DisableRow))`
    update subscriptions s
    set consecutive_failures = s.consecutive_failures + 1,
        enabled = s.enabled and s.consecutive_failures + 1 < ${disableAfter},
        disabled_reason = case when s.enabled and s.consecutive_failures + 1 >= ${disableAfter}
                               then ${reason.slice(0, 600)} else s.disabled_reason end
    from (select enabled from subscriptions where id = ${subscriptionId} for update) old
    where s.id = ${subscriptionId}
    returning s.owner_id, s.name, (old.enabled and not s.enabled) as just_disabled`);
  if (after.just_disabled)
    await tx.query(sql.unsafe`
      insert into account_notices (user_id, kind, subscription_id, message)
      values (${after.owner_id}, 'subscription', ${subscriptionId},
              ${`Your subscription “${after.name}” was disabled after ${disableAfter} failed delivery attempts in a row. Fix the receiver and enable it again on the Subscriptions page: the delivery that failed is sent again; what is stored while it is disabled is not delivered.`})`);
}

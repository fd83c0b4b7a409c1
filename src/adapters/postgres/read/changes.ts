import { Type } from 'typebox';
import { type ChangePosition, isBefore, prunedCursor } from '../../../domain/read/change-cursor.ts';
import type { EventFilter } from '../../../domain/read/read-query.ts';
import type { Change, ChangeFeed } from '../../../ports/read/change-feed.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { joinSql, type Sql, sqlText, typed } from '../sql-text.ts';
import { eventJson } from './page.ts';
import { eventsFrom } from './private-locations.ts';
import { rawConditions } from './rows.ts';
import { type Scope, scopeResolver } from './scope.ts';

// The change feed on PostgreSQL (migration 0900_event_changes.sql). The visibility fence: a read
// takes only changes of transactions below pg_snapshot_xmin of its own snapshot; every such
// transaction has ended, so the set of changes before the fence never grows again, and ordering by
// (txid, seq) puts every change that becomes visible later after every one already read. A
// transaction held open (a long import batch) holds the feed back until it ends, never makes it
// skip. Reads run on the primary: a replica's snapshot is the primary's with a delay, but its xmin
// may be older than what the primary has shown (hot_standby_feedback aside), and a reader switching
// between them would see the fence move back.

const CHANGE_COLUMNS = {
  txid: Type.String(),
  seq: Type.String(),
  kind: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('deleted')]),
  event_id: Type.Number(),
  stored_at: Type.String(),
  event: Type.Union([Type.String(), Type.Null()]),
};
const ChangeRow = row(Type.Object(CHANGE_COLUMNS));
/** A change with the requests (their indexes) whose positions and conditions it is among. */
const RequestedChangeRow = row(Type.Object({ ...CHANGE_COLUMNS, requests: Type.Array(Type.Number()) }));
const TailRow = row(
  Type.Object({
    horizon_txid: Type.String(),
    horizon_seq: Type.String(),
    tail_txid: Type.Union([Type.String(), Type.Null()]),
    tail_seq: Type.Union([Type.String(), Type.Null()]),
  }),
);

const position = (txid: string, seq: string): ChangePosition => ({ txid: BigInt(txid), seq: BigInt(seq) });

/**
 * Conditions on `event_changes ch`: the viewer's datasets (the change row's own), and the box and
 * dates on the event as it is now. Without a box or dates every change of a readable dataset is
 * shown, one whose event was deleted since without it (its deletion follows); with them, only
 * changes of events that match now, and every deletion (it has no place or time left to test).
 */
function changeConditions(scope: Scope, filter: EventFilter) {
  const datasets =
    scope.datasetIds === null ? sqlText`true` : sqlText`ch.dataset_id = any(${scope.datasetIds})`;
  if (!filter.bounds && filter.dates.from === null && filter.dates.to === null) return datasets;
  const onEvent = rawConditions({ ...scope, catalogId: null, datasetIds: null }, filter, filter.dates);
  return sqlText`${datasets}
    and (ch.kind = 'deleted' or exists (select 1 from ${eventsFrom(scope)} e where e.id = ch.event_id and ${onEvent}))`;
}

/** The projection of a page of changes: each change with the event as the scope shows it now. */
function projectedChanges(scope: Scope, extra: Sql = sqlText``) {
  return sqlText`
    select p.txid::text as txid, p.seq::text as seq, p.kind, p.event_id${extra},
           to_char(p.stored_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as stored_at,
           (select ${eventJson()}
            from ${eventsFrom(scope)} e
            cross join lateral (select d.title, c.slug, d.provenance_public
                                from datasets d join catalogs c on c.id = d.catalog_id
                                where d.id = e.dataset_id) d
            where e.id = p.event_id and p.kind <> 'deleted') as event
    from page p order by p.txid, p.seq`;
}

const changeOf = (r: {
  txid: string;
  seq: string;
  kind: Change['kind'];
  event_id: number;
  stored_at: string;
  event: string | null;
}): Change => ({
  position: position(r.txid, r.seq),
  kind: r.kind,
  eventId: r.event_id,
  storedAt: r.stored_at,
  eventJson: r.event,
});

export function postgresChangeFeed(pool: DatabasePool): ChangeFeed {
  const scopes = scopeResolver(pool, {});

  // The same conditions and projection as readChanges, on the changes at the given positions
  // (a subscription's deliveries, issue 39 §2): what /api/v1/changes would show this viewer of
  // them, for several filters in one statement (all the due deliveries of one owner). Each request
  // is tested with its own scope and conditions; the events are projected once, through the scope
  // of the viewer's whole access: its generalised datasets are the union of every request's, and
  // each request only keeps changes of datasets its own scope allows.
  const readChangesAtEach: ChangeFeed['readChangesAtEach'] = async (viewer, requests) => {
    const asked = requests.map((r, i) => ({ ...r, i })).filter((r) => r.positions.length > 0);
    if (asked.length === 0) return requests.map(() => []);
    const everything = { ...asked[0]!.filter, catalog: null, datasets: [] };
    const [projection, ...scoped] = await Promise.all([
      scopes.scopeOf(viewer, everything),
      ...asked.map((r) => scopes.scopeOf(viewer, r.filter)),
    ]);
    const hits = joinSql(
      asked.map((r, k) => {
        const txids = r.positions.map((p) => p.txid.toString());
        const seqs = r.positions.map((p) => p.seq.toString());
        return sqlText`select ${r.i}::int as request, ch.txid, ch.seq, ch.kind, ch.event_id, ch.stored_at
          from unnest(${sql.array(txids, 'text')}::xid8[], ${sql.array(seqs, 'text')}::int8[]) at(txid, seq)
          join event_changes ch on ch.txid = at.txid and ch.seq = at.seq
          where ${changeConditions(scoped[k]!, r.filter)}`;
      }),
      ' union all ',
    );
    const rows = await pool.any(typed(RequestedChangeRow)`
      with hits as materialized (${hits}),
      page as materialized (
        select h.txid, h.seq, h.kind, h.event_id, h.stored_at, array_agg(h.request) as requests
        from hits h group by h.txid, h.seq, h.kind, h.event_id, h.stored_at)
      ${projectedChanges(projection!, sqlText`, p.requests`)}`);
    const answers: Change[][] = requests.map(() => []);
    for (const r of rows) {
      const change = changeOf(r);
      for (const i of r.requests) answers[i]?.push(change);
    }
    return answers;
  };
  return {
    async readChangesAt(viewer, filter, positions) {
      const [changes] = await readChangesAtEach(viewer, [{ filter, positions }]);
      return changes ?? [];
    },
    readChangesAtEach,
    async readChanges(viewer, filter, after, limit) {
      const scope = await scopes.scopeOf(viewer, filter);
      // One transaction, one snapshot: the horizon, the page and the tail are read at one fence.
      return pool.transaction(async (tx) => {
        await tx.query(sql.unsafe`set transaction isolation level repeatable read, read only`);
        const tail = await tx.one(typed(TailRow)`
          select h.txid::text as horizon_txid, h.seq::text as horizon_seq,
                 t.txid::text as tail_txid, t.seq::text as tail_seq
          from event_changes_horizon h
          left join lateral (select c.txid, c.seq from event_changes c
                             where c.txid < pg_snapshot_xmin(pg_current_snapshot())
                             order by c.txid desc, c.seq desc limit 1) t on true`);
        const horizon = position(tail.horizon_txid, tail.horizon_seq);
        if (after && isBefore(after, horizon)) throw prunedCursor(horizon);
        const from = after ?? horizon;
        const rows = await tx.any(typed(ChangeRow)`
          with page as materialized (
            select ch.txid, ch.seq, ch.kind, ch.event_id, ch.stored_at from event_changes ch
            where ch.txid < pg_snapshot_xmin(pg_current_snapshot())
              and (ch.txid, ch.seq) > (${from.txid.toString()}::xid8, ${from.seq.toString()}::int8)
              and ${changeConditions(scope, filter)}
            order by ch.txid, ch.seq limit ${limit})
          ${projectedChanges(scope)}`);
        const changes: Change[] = rows.map(changeOf);
        const hasMore = changes.length === limit;
        const last = changes.at(-1)?.position ?? from;
        // A page that is not full read every change before the fence: the next read starts after
        // all of them, not only after those this viewer and filter were shown.
        const end =
          tail.tail_txid !== null && tail.tail_seq !== null ? position(tail.tail_txid, tail.tail_seq) : from;
        const next = hasMore || isBefore(end, last) ? last : end;
        return { changes, next, hasMore };
      });
    },
  };
}

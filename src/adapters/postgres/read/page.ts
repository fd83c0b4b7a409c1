import { viewerCacheIdentity } from '../../../domain/access.ts';
import { Type } from 'typebox';
import { pageAnswer } from './answer-path.ts';
import type { Sort } from '../../../domain/read/read-query.ts';
import type { EventReader, EventsPage } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, prepared, row } from '../database.ts';
import { type Sql, sqlText, typed } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import { type CachedPage, type PageCache } from './page-cache.ts';
import { dataSignature } from './data-version.ts';
import { countParts } from './parts.ts';
import { keysetCondition, orderBy, rawConditions, unionParts } from './rows.ts';
import { provenanceJson } from './provenance-sql.ts';
import type { ScopeResolver } from './scope.ts';

// The /events page and its total: the path (box rows, one prepared statement on the generic- or
// custom-plan pool, or page and total side by side) is pageAnswer's (src/adapters/postgres/read/answer-path.ts).

type Fragment = Sql;

const Signature = Type.Union([Type.String(), Type.Null()]);
const PageRow = row(
  Type.Object({ events: Type.String(), total: Type.Number(), scope: Signature, data: Type.String() }),
);
const EventsRow = row(Type.Object({ events: Type.String(), scope: Signature, data: Type.String() }));
const CheckedCountRow = row(Type.Object({ count: Type.Number(), scope: Signature, data: Type.String() }));

export function pageReads(
  pool: DatabasePool,
  scopes: ScopeResolver,
  options: { cache: PageCache | null; genericPlanPool?: DatabasePool },
): Pick<EventReader, 'listEventsPage'> {
  const { cache, genericPlanPool } = options;
  return {
    async listEventsPage(viewer, filter, sort, page, options = {}) {
      // The normalised request (parsed filter, sort and page) and who asks: viewers never share
      // entries, and the same page asked in other words is the same entry.
      const key =
        cache && !options.fresh ? JSON.stringify([viewerCacheIdentity(viewer), filter, sort, page]) : null;
      if (key !== null) {
        const hit = await cache?.lookup(key);
        if (hit) return hit;
      }
      // A numbered page skips the rows before it; a keyset page starts after its position instead.
      const window = page.after
        ? sqlText`limit ${page.limit}`
        : sqlText`limit ${page.limit} offset ${(page.page - 1) * page.limit}`;
      const after = page.after ? sqlText`and ${keysetCondition(sort, page.after)}` : sqlText``;
      return scopes.withVerifiedScope(viewer, filter, async (scope, verify, known) => {
        const data = dataSignature(known.ids);
        // Stored only when every statement saw the remembered scope and the same data versions.
        const answered = (
          value: CachedPage,
          rows: Array<{ scope: string | null; data: string }>,
        ): { value: EventsPage; signatures: Array<string | null> } => {
          const signature = rows[0]?.data;
          const consistent =
            signature !== undefined && rows.every((r) => r.scope === known.signature && r.data === signature);
          if (key !== null && consistent) cache?.store(key, value, known.ids, signature);
          return {
            value: { ...value, signature: consistent ? signature : null },
            signatures: rows.map((r) => r.scope),
          };
        };
        const answer = pageAnswer(scope, filter, sort);
        if (answer.kind === 'box-rows') {
          // A small box (a city at zoom 10 and closer): the level-10 counts would answer little of
          // its total and its rows are read anyway, so one index-only pass over the box's entries of
          // the covering (grid_x) index gives both the total and the page (a top-N sort of them).
          // The page's conditions alone let the planner combine the dataset or catalog index with
          // the grid one in a bitmap and then visit the heap for every event of the box.
          const result = await pool.one(typed(PageRow)`
            with box as materialized (
              select e.id, e.event_timestamp, e.dataset_id from ${eventsFrom(scope)} e
              where ${rawConditions(scope, filter, filter.dates)}
            ), page as materialized (
              select e.id from box e where true ${after} order by ${orderBy(sort)} ${window}
            )
            select (${pageJson(sort, scope)}) as events, (select count(*) from box)::int8 as total,
                   ${verify} as scope, ${data} as data`);
          return answered({ eventsJson: Buffer.from(result.events), totalDocs: result.total }, [result]);
        }
        // The page's ids first, from the covering indexes where the sort allows it (id, time, place,
        // dataset are all in them); then only the page's rows, with their data, turned into the
        // response's JSON by the database (Node passes the text on).
        const events = sqlText`
          with page as materialized (
            select e.id from ${eventsFrom(scope)} e
            where ${rawConditions(scope, filter, filter.dates)} ${after}
            order by ${orderBy(sort)} ${window}
          )
          ${pageJson(sort, scope)}`;
        const total = sqlText`
          select coalesce(sum(n), 0)::int8 from (${unionParts(countParts(scope, filter))}) u`;
        // A total from the precomputed counts is cheap: one statement, one round trip. A total that
        // reads rows (bounds, a custom date field) runs beside the page, on a second connection.
        if (answer.kind === 'one-statement') {
          // Prepared (the text takes a few dozen shapes: the date spans of the window, the sort, the
          // scope): its parse and analysis were about a quarter of the backend's CPU per page. Custom
          // plans (PostgreSQL never chose the generic one: with LIMIT and OFFSET parameters it assumes
          // a tenth of the rows) cost as much again, so the shapes whose generic plan is as good run
          // on the generic-plan pool.
          const target = genericPlanPool && answer.genericPlan ? genericPlanPool : pool;
          const result = await target.one(
            prepared(typed(PageRow)`select (${events}) as events, (${total}) as total, ${verify} as scope,
                                     ${data} as data`),
          );
          return answered({ eventsJson: Buffer.from(result.events), totalDocs: result.total }, [result]);
        }
        const [page, count] = await Promise.all([
          pool.one(typed(EventsRow)`select (${events}) as events, ${verify} as scope, ${data} as data`),
          pool.one(typed(CheckedCountRow)`select (${total}) as count, ${verify} as scope, ${data} as data`),
        ]);
        // Two statements, two snapshots: equal data versions in both mean no write in between.
        return answered({ eventsJson: Buffer.from(page.events), totalDocs: count.count }, [page, count]);
      });
    },
  };
}

/**
 * The events of a `page` CTE of ids, as the JSON text of the response's array, in the page's order.
 * Written as text (as featureJson): json_build_object per event and json_agg took a fifth more of the
 * statement's execution for a page of 100. Strings and numbers go through to_json (escapes, and
 * a non-finite coordinate as a JSON string, as json_build_object wrote it); `data` is jsonb's text.
 * Each event and its dataset are looked up by key, one by one (`offset 0` keeps the subqueries as
 * they are): a generic plan takes a page for a tenth of the rows it limits (LIMIT is a parameter)
 * and joined 100,000 of them to the whole events table, half a second a page.
 */
export function pageJson(sort: Sort, scope: { generalised: Fragment | null }): Fragment {
  return sqlText`
    select coalesce('[' || string_agg(${eventJson()}, ',' order by ${orderBy(sort)}) || ']', '[]')
    from page p
    cross join lateral (select e.id, e.title, e.dataset_id, e.catalog_id, e.data, e.location, e.located_by,
                               e.event_timestamp, e.is_valid, e.ingest_job_id, e.source_row, e.created_at,
                               e.updated_at
                        from ${eventsFrom(scope)} e where e.id = p.id offset 0) e
    cross join lateral (select d.title, c.slug, d.provenance_public from datasets d join catalogs c on c.id = d.catalog_id
                        where d.id = e.dataset_id offset 0) d`;
}

/**
 * One event as the JSON text of an EventView, from `e` (the events row) and `d` (its dataset's
 * title and its catalog's slug): the one projection of events that /events and the change feed
 * (changes.ts) send, so that what an event reveals is decided here.
 */
export function eventJson(): Fragment {
  return sqlText`'{"id":' || e.id
    || ',"title":' || coalesce(to_json(e.title)::text, 'null')
    || ',"dataset":{"id":' || e.dataset_id || ',"title":' || to_json(d.title)::text
    || ',"catalog":' || to_json(d.slug)::text
    || '},"data":' || e.data::text
    || ',"location":' || case when e.location is null then 'null'
         else '{"longitude":' || to_json(st_x(e.location))::text
              || ',"latitude":' || to_json(st_y(e.location))::text || '}' end
    || ',"locatedBy":' || case when e.located_by is not null then e.located_by::text
         when e.location is not null then '{"method":"coordinates"}' else 'null' end
    || ',"eventTimestamp":"' || to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
    || '","isValid":' || case when e.is_valid then 'true' else 'false' end
    || ',"provenance":' || ${provenanceJson}
    || '}'`;
}

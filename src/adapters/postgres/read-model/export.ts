import { Type } from 'typebox';
import { invalid, type EventFilter, type KeysetPosition, type Sort } from '../../../domain/read-query.ts';
import type { EventExport, EventExporter, ExportFormat } from '../../../ports/event-exporter.ts';
import type { Viewer } from '../../../ports/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { joinSql, type Sql, sqlText, typed } from '../sql-text.ts';
import { keysetCondition, orderBy, rawConditions } from './rows.ts';
import { type Scope, scopeResolver } from './scope.ts';

// The exports of /api/v1 (docs/api-v1.md, "Exports"): the filtered events in batches of
// EXPORT_BATCH_SIZE, each batch one statement (with the pool's statement budget) that starts after
// the last event of the one before (keyset paging, rows.ts keysetCondition) and returns the batch
// already written as GeoJSON features or CSV lines, so Node only passes text on. The next batch is
// read while one is written; no connection is held while the client is slow (a slow client holds no
// backend), and memory is a few batches whatever the size.
// Every statement runs in the request's query scope, so a client that disconnects cancels the one
// running and no other starts (postgres/query-cancellation.ts).

/**
 * Events per statement: ~1.5 MB of GeoJSON; large enough that per-statement costs vanish, small
 * enough that the few copies of a batch in flight (the row, the string, the socket's buffer) stay
 * well under the memory target (docs/performance.md, "Exports").
 */
export const EXPORT_BATCH_SIZE = 5_000;

/**
 * The budget of the CSV export's one pass over the filtered events for its columns (the keys of
 * their data), longer than the read pool's per-statement budget: it reads every row of the export
 * once, as the batches will (a second or so per million events).
 */
export const CSV_KEYS_STATEMENT_TIMEOUT_MS = 60_000;

/** CSV columns of the `data` keys at most (beyond: a 400 that says to narrow or use GeoJSON). */
export const MAX_CSV_DATA_COLUMNS = 1000;

/** The CSV columns before the data keys. */
export const CSV_FIXED_COLUMNS = ['id', 'eventTimestamp', 'dataset', 'catalog', 'longitude', 'latitude'];

const BatchRow = row(
  Type.Object({ chunk: Type.String(), n: Type.Number(), last: Type.Union([Type.String(), Type.Null()]) }),
);
const KeysRow = row(Type.Object({ keys: Type.Array(Type.String()) }));
const SettingRow = row(Type.Object({ setting: Type.String() }));

const TIMESTAMP = sqlText`to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A GeoJSON Feature per event, as text. */
const FEATURE = sqlText`'{"type":"Feature","id":' || e.id || ',"geometry":'
  || case when e.location is null then 'null'
       else '{"type":"Point","coordinates":[' || to_json(st_x(e.location))::text || ','
            || to_json(st_y(e.location))::text || ']}' end
  || ',"properties":{"eventTimestamp":"' || ${TIMESTAMP} || '","dataset":' || to_json(d.slug)::text
  || ',"catalog":' || to_json(c.slug)::text || ',"data":' || e.data::text || '}}'`;

/** RFC 4180: a field with a quote, comma, CR or LF is quoted, its quotes doubled. */
function quoted(text: Sql): Sql {
  return sqlText`case when ${text} ~ '[",\r\n]' then '"' || replace(${text}, '"', '""') || '"' else ${text} end`;
}

/**
 * A text value that a spreadsheet would run as a formula (it starts with =, +, -, @, tab or CR) gets
 * a leading apostrophe (OWASP's advice for CSV injection). Only strings: numbers, negative ones
 * included, are written as stored.
 */
function protectedText(text: Sql): Sql {
  return sqlText`case when left(${text}, 1) in ('=', '+', '-', '@', chr(9), chr(13))
    then ${quoted(sqlText`('''' || ${text})`)} else ${quoted(text)} end`;
}

/** Fixed SQL text made in code (column aliases j0, t0, ...), never from input. */
const raw = (text: string): Sql => sqlText(Object.assign([text], { raw: [text] }) as TemplateStringsArray);

/** The CSV field of one data value (`v<i>` the jsonb value, `t<i>` its text, from the lateral `v`). */
function csvCell(index: number): Sql {
  const json = raw(`v.j${index}`);
  const text = raw(`v.t${index}`);
  return sqlText`case jsonb_typeof(${json}) when 'string' then ${protectedText(text)}
    when 'object' then ${quoted(sqlText`${json}::text`)} when 'array' then ${quoted(sqlText`${json}::text`)}
    else coalesce(${text}, '') end`;
}

/** The header's names: the data keys as they are, unless one is a fixed column's name (then `data.<key>`). */
export function csvHeader(keys: string[]): string {
  const names = [
    ...CSV_FIXED_COLUMNS,
    ...keys.map((key) => (CSV_FIXED_COLUMNS.includes(key) ? `data.${key}` : key)),
  ];
  return `${names.map(csvField).join(',')}\r\n`;
}

function csvField(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** How a batch's rows become text: each row's text, what joins them, and the lateral it reads. */
type RowText = { line: Sql; separator: Sql; lateral: Sql };

function csvLine(keys: string[]): RowText {
  const fixed = sqlText`e.id || ',' || ${TIMESTAMP} || ',' || d.slug || ',' || c.slug || ','
    || coalesce(to_json(st_x(e.location))::text, '') || ',' || coalesce(to_json(st_y(e.location))::text, '')`;
  const cells = keys.map((_, index) => sqlText`|| ',' || ${csvCell(index)}`);
  // Each key is looked up once per row (offset 0 keeps the subquery from being inlined into every use).
  const columns = keys.map(
    (key, index) =>
      sqlText`e.data -> ${key} as ${raw(`j${index}`)}, e.data ->> ${key} as ${raw(`t${index}`)}`,
  );
  const lateral =
    keys.length === 0 ? sqlText`` : sqlText`cross join lateral (select ${joinSql(columns, ', ')} offset 0) v`;
  return { line: sqlText`${fixed} ${joinSql(cells, ' ')} || E'\r\n'`, separator: sqlText`''`, lateral };
}

/** The JSON of the position after a row: `[id, sort value]`. */
function positionOf(sort: Sort): Sql {
  const field = sort.key.field;
  const value =
    field === 'eventTimestamp'
      ? sqlText`e.event_timestamp`
      : field === 'dataset'
        ? sqlText`e.dataset_id`
        : field === 'isValid'
          ? sqlText`e.is_valid`
          : sqlText`null`;
  return sqlText`json_build_array(e.id, ${value})::text`;
}

export function postgresEventExporter(pool: DatabasePool): EventExporter {
  const scopes = scopeResolver(pool, {});

  async function dataKeys(scope: Scope, filter: EventFilter): Promise<string[]> {
    const { keys } = await pool.transaction(async (transaction) => {
      await transaction.query(
        typed(
          SettingRow,
        )`select set_config('statement_timeout', ${String(CSV_KEYS_STATEMENT_TIMEOUT_MS)}, true) as setting`,
      );
      return transaction.one(typed(KeysRow)`
        select coalesce(array_agg(k order by k), '{}') as keys
        from (select distinct jsonb_object_keys(e.data) as k from events e
              where ${rawConditions(scope, filter, filter.dates)} and jsonb_typeof(e.data) = 'object') s`);
    });
    if (keys.length > MAX_CSV_DATA_COLUMNS)
      throw invalid(
        'datasets',
        `the events' data has ${keys.length} different keys, more than the ${MAX_CSV_DATA_COLUMNS} columns a CSV export holds; narrow the datasets or export GeoJSON`,
      );
    return keys;
  }

  async function* batches(scope: Scope, filter: EventFilter, sort: Sort, text: RowText) {
    const reversed = { ...sort, descending: !sort.descending };
    const read = (after: KeysetPosition | null) => {
      const keyset = after ? sqlText`and ${keysetCondition(sort, after)}` : sqlText``;
      return pool.one(typed(BatchRow)`
        with batch as materialized (
          select e.id, e.dataset_id, e.catalog_id, e.event_timestamp, e.is_valid, e.location, e.data
          from events e
          where ${rawConditions(scope, filter, filter.dates)} ${keyset}
          order by ${orderBy(sort)} limit ${EXPORT_BATCH_SIZE}
        )
        select coalesce(string_agg(${text.line}, ${text.separator} order by ${orderBy(sort)}), '') as chunk,
               count(*)::int4 as n,
               (select ${positionOf(sort)} from batch e order by ${orderBy(reversed)} limit 1) as last
        from batch e
        join datasets d on d.id = e.dataset_id join catalogs c on c.id = e.catalog_id
        ${text.lateral}`);
    };
    // The next batch is read while this one is written: PostgreSQL and the socket work at once
    // instead of in turn (one batch more in memory). If the consumer stops, the read in flight is
    // cancelled with the request (query-cancellation.ts); its failure is then nobody's to report.
    let next: ReturnType<typeof read> | null = read(null);
    while (next) {
      const batch = await next;
      next = null;
      if (batch.n === 0) return;
      if (batch.n === EXPORT_BATCH_SIZE && batch.last !== null) {
        const [id, value] = JSON.parse(batch.last) as [number, string | number | boolean | null];
        next = read({ id, value });
        next.catch(() => {});
      }
      yield batch.chunk;
    }
  }

  return {
    async exportEvents(viewer: Viewer, filter: EventFilter, sort: Sort, format: ExportFormat) {
      const scope = await scopes.scopeOf(viewer, filter);
      if (format === 'geojson') {
        // Features joined by `,\n` within a batch, and between batches (geojsonExport's separator).
        const features = { line: FEATURE, separator: sqlText`E',\n'`, lateral: sqlText`` };
        return geojsonExport(batches(scope, filter, sort, features));
      }
      const keys = await dataKeys(scope, filter);
      return {
        head: csvHeader(keys),
        batches: batches(scope, filter, sort, csvLine(keys)),
        separator: '',
        tail: '',
      } satisfies EventExport;
    },
  };
}

function geojsonExport(features: AsyncIterable<string>): EventExport {
  return {
    head: '{"type":"FeatureCollection","features":[\n',
    batches: features,
    separator: ',\n',
    tail: '\n]}\n',
  };
}

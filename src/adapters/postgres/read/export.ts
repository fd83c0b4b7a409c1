import { Type } from 'typebox';
import { csvField } from '../../../domain/csv-field.ts';
import type { EventFilter, KeysetPosition, Sort } from '../../../domain/read/read-query.ts';
import type { EventExport, EventExporter, ExportFormat } from '../../../ports/read/event-exporter.ts';
import type { Viewer } from '../../../ports/read/event-reader.ts';
import { type DatabasePool, row } from '../database.ts';
import { joinSql, type Sql, sqlText, typed } from '../sql-text.ts';
import { datasetKeys } from './export-columns.ts';
import { keysetCondition, orderBy, rawConditions } from './rows.ts';
import { type Scope, scopeResolver } from './scope.ts';

// The exports of /api/v1 (docs/api-v1.md, "Exports"): the filtered events in ranges of about
// EXPORT_BATCH_SIZE events, each range read by one statement (with the pool's statement budget) that
// returns it already written as GeoJSON features or CSV lines, so Node only passes text on.
// The ranges' bounds come first, several at a time, from a statement that reads only the sort keys
// (`boundaries`): the positions of every EXPORT_BATCH_SIZE-th event. Knowing them, the export reads
// EXPORT_PARALLEL_READS ranges at once on their own connections, so the text is built on as many
// cores as the database has while Node writes. Memory is those ranges and the one being written,
// whatever the export's size; the next read starts only when the client has taken a range
// (backpressure), so a slow client holds no backend.
// A range is (one position, the next one], both ends as keyset conditions (rows.ts): an event
// written into a range after its bounds were found is in it, none is read twice. A range that has
// grown past RANGE_READ_LIMIT since is read on from where its first read stopped.
// Every statement runs in the request's query scope, so a client that disconnects cancels the ones
// running and no other starts (postgres/query-cancellation.ts).

/**
 * Events per range: ~1.5 MB of GeoJSON; large enough that per-statement costs vanish, small enough
 * that the ranges in flight stay well under the memory target (docs/performance.md, "Exports").
 */
export const EXPORT_BATCH_SIZE = 5_000;

/**
 * Events per piece of text a range comes back in (about 80 kB of GeoJSON): pieces that small stay
 * in V8's young generation and PostgreSQL's messages in the driver's small buffers; one string per
 * 5,000-event range (1.6 MB) went to the large-object space and let the process grow by up to 66
 * MB during an export (docs/performance.md, "Exports").
 */
const EXPORT_CHUNK_EVENTS = 250;

/** Ranges read at once: the 2 cores of the reference machine (docs/performance.md, "Exports"). */
const EXPORT_PARALLEL_READS = 2;

/** Range bounds found by one `boundaries` statement. */
const EXPORT_BOUNDS_PER_STATEMENT = 8;

/** Events one read of a range returns at most (a range holds EXPORT_BATCH_SIZE unless written into). */
const RANGE_READ_LIMIT = EXPORT_BATCH_SIZE * 2;

/** The CSV columns before the data keys. */
const CSV_FIXED_COLUMNS = ['id', 'title', 'eventTimestamp', 'dataset', 'catalog', 'longitude', 'latitude'];

const ChunkRow = row(Type.Object({ chunk: Type.String(), n: Type.Number() }));
const BoundsRow = row(Type.Object({ positions: Type.Array(Type.String()) }));

const TIMESTAMP = sqlText`to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A GeoJSON Feature per event, as text. */
const FEATURE = sqlText`'{"type":"Feature","id":' || e.id || ',"geometry":'
  || case when e.location is null then 'null'
       else '{"type":"Point","coordinates":[' || to_json(st_x(e.location))::text || ','
            || to_json(st_y(e.location))::text || ']}' end
  || ',"properties":{"title":' || coalesce(to_json(e.title)::text, 'null')
  || ',"eventTimestamp":"' || ${TIMESTAMP} || '","dataset":' || to_json(d.slug)::text
  || ',"catalog":' || to_json(c.slug)::text || ',"data":' || e.data::text || '}}'`;

/** RFC 4180: a field with a quote, comma, CR or LF is quoted, its quotes doubled. */
function quoted(text: Sql): Sql {
  return sqlText`case when ${text} ~ '[",\r\n]' then '"' || replace(${text}, '"', '""') || '"' else ${text} end`;
}

/** Fixed SQL text made in code (column aliases t0, t1, ...), never from input. */
const raw = (text: string): Sql => sqlText(Object.assign([text], { raw: [text] }) as TemplateStringsArray);

/**
 * The CSV field of one data value, from `t<i>`, its text (`->>`) in the lateral `v`: missing or
 * null empty; objects and arrays as their JSON; quoted when it holds a quote, comma, CR or LF. A
 * text value that a spreadsheet would run as a formula (it starts with =, +, -, @, tab or CR) gets
 * a leading apostrophe (OWASP's advice for CSV injection). Only strings: numbers, negative ones
 * included, are written as stored. Only a leading `-` needs the value's type (no other JSON value's
 * text starts with one of the others), so the jsonb value is looked up again only then: one lookup
 * per cell instead of two (docs/performance.md, "Exports").
 */
function csvCell(key: string, index: number): Sql {
  const text = raw(`v.t${index}`);
  return sqlText`case when ${text} is null then ''
    when left(${text}, 1) in ('=', '+', '@', chr(9), chr(13))
      or (left(${text}, 1) = '-' and jsonb_typeof(e.data -> ${key}) = 'string')
    then ${quoted(sqlText`('''' || ${text})`)} else ${quoted(text)} end`;
}

/** The CSV field of a text column (the title): as a text value of `data` is written, apostrophe and all. */
function csvText(text: Sql): Sql {
  return sqlText`case when ${text} is null then ''
    when left(${text}, 1) in ('=', '+', '-', '@', chr(9), chr(13)) then ${quoted(sqlText`('''' || ${text})`)}
    else ${quoted(text)} end`;
}

/** The header's names: the data keys as they are, unless one is a fixed column's name (then `data.<key>`). */
function csvHeader(keys: string[]): string {
  const names = [
    ...CSV_FIXED_COLUMNS,
    ...keys.map((key) => (CSV_FIXED_COLUMNS.includes(key) ? `data.${key}` : key)),
  ];
  return `${names.map(csvField).join(',')}\r\n`;
}

/** How a batch's rows become text: each row's text, what joins them, and the lateral it reads. */
type RowText = { line: Sql; separator: Sql; lateral: Sql };

function csvLine(keys: string[]): RowText {
  const fixed = sqlText`e.id || ',' || ${csvText(sqlText`e.title`)} || ',' || ${TIMESTAMP} || ',' || d.slug || ',' || c.slug || ','
    || coalesce(to_json(st_x(e.location))::text, '') || ',' || coalesce(to_json(st_y(e.location))::text, '')`;
  const cells = keys.map((key, index) => sqlText`|| ',' || ${csvCell(key, index)}`);
  // Each key is looked up once per row (offset 0 keeps the subquery from being inlined into every use).
  const columns = keys.map((key, index) => sqlText`e.data ->> ${key} as ${raw(`t${index}`)}`);
  const lateral =
    keys.length === 0 ? sqlText`` : sqlText`cross join lateral (select ${joinSql(columns, ', ')} offset 0) v`;
  return { line: sqlText`${fixed} ${joinSql(cells, ' ')} || E'\r\n'`, separator: sqlText`''`, lateral };
}

/** The sort's column besides `e.id` (null when the sort is by id). */
function sortColumn(sort: Sort): Sql | null {
  const field = sort.key.field;
  if (field === 'eventTimestamp') return sqlText`e.event_timestamp`;
  if (field === 'dataset') return sqlText`e.dataset_id`;
  if (field === 'isValid') return sqlText`e.is_valid`;
  return null;
}

/** The JSON of the position after a row: `[id, sort value]`. */
function positionOf(sort: Sort): Sql {
  return sqlText`json_build_array(e.id, ${sortColumn(sort) ?? sqlText`null`})::text`;
}

/**
 * The columns a position needs (`e.id` and the sort's column): no more, so that the sort's index
 * can answer the boundaries statement alone when no other condition needs the row.
 */
function sortColumns(sort: Sort): Sql {
  const column = sortColumn(sort);
  return column ? sqlText`e.id, ${column}` : sqlText`e.id`;
}

/** A range of the export: the events after `from` (all when null) up to and with `to` (all when null). */
type Range = { from: KeysetPosition | null; to: KeysetPosition | null };

/** Tuning of the reads; the defaults are the constants above (tests make them small). */
type ExportReadOptions = { batchSize: number; boundsPerStatement: number; rangeReadLimit: number };

export function postgresEventExporter(
  pool: DatabasePool,
  options: ExportReadOptions = {
    batchSize: EXPORT_BATCH_SIZE,
    boundsPerStatement: EXPORT_BOUNDS_PER_STATEMENT,
    rangeReadLimit: RANGE_READ_LIMIT,
  },
): EventExporter {
  const scopes = scopeResolver(pool, {});
  const columns = datasetKeys(pool);
  const { batchSize, boundsPerStatement, rangeReadLimit } = options;

  async function* batches(scope: Scope, filter: EventFilter, sort: Sort, text: RowText) {
    const conditions = rawConditions(scope, filter, filter.dates);
    const after = (position: KeysetPosition | null) =>
      position ? sqlText`and ${keysetCondition(sort, position)}` : sqlText``;
    const upTo = (position: KeysetPosition | null) =>
      position ? sqlText`and not ${keysetCondition(sort, position)}` : sqlText``;

    /** The positions of every batchSize-th event after `start`: boundsPerStatement of them at most, none past `end`. */
    const boundaries = async (start: KeysetPosition | null, end: KeysetPosition | null) => {
      const { positions } = await pool.one(typed(BoundsRow)`
        select coalesce(array_agg(${positionOf(sort)} order by e.ordinal), '{}') as positions
        from (select e.*, row_number() over (order by ${orderBy(sort)}) as ordinal
              from (select ${sortColumns(sort)} from events e
                    where ${conditions} ${after(start)} ${upTo(end)}
                    order by ${orderBy(sort)} limit ${batchSize * boundsPerStatement}) e) e
        where e.ordinal % ${batchSize} = 0 /* export_bounds */`);
      return positions.map((position) => {
        const [id, value] = JSON.parse(position) as [number, string | number | boolean | null];
        return { id, value } satisfies KeysetPosition;
      });
    };

    /** One read of a range: its first rangeReadLimit events as text, in the sort's order. */
    const read = async (range: Range): Promise<{ chunks: string[]; n: number }> => {
      const rows = await pool.any(typed(ChunkRow)`
        select string_agg(e.export_line, ${text.separator} order by e.ordinal) as chunk, count(*)::int4 as n
        from (select ${text.line} as export_line, row_number() over (order by ${orderBy(sort)}) as ordinal
              from events e join datasets d on d.id = e.dataset_id join catalogs c on c.id = e.catalog_id
              ${text.lateral}
              where ${conditions} ${after(range.from)} ${upTo(range.to)}
              order by ${orderBy(sort)} limit ${rangeReadLimit}) e
        group by (e.ordinal - 1) / ${EXPORT_CHUNK_EVENTS}
        order by min(e.ordinal)`);
      return { chunks: rows.map((found) => found.chunk), n: rows.reduce((sum, found) => sum + found.n, 0) };
    };

    /** The ranges from `start` to `end`, as far as one boundaries statement sees, and where the rest begins. */
    const rangesAfter = async (start: KeysetPosition | null, end: KeysetPosition | null) => {
      const positions = await boundaries(start, end);
      const edges = [start, ...positions];
      const ranges: Range[] = positions.map((to, index) => ({ from: edges[index] ?? null, to }));
      // Fewer bounds than asked: what is left after the last one is less than a batch, the final range.
      if (positions.length < boundsPerStatement)
        return { ranges: [...ranges, { from: edges.at(-1) ?? null, to: end }], rest: undefined };
      return { ranges, rest: positions.at(-1) ?? null };
    };

    /**
     * A range that a read found at rangeReadLimit events (written into since its bounds were found,
     * so it may hold more): its read is dropped and the range is split and read again, in order.
     */
    async function* readSplit(range: Range): AsyncGenerator<string> {
      let start = range.from;
      for (;;) {
        const { ranges, rest } = await rangesAfter(start, range.to);
        for (const part of ranges) {
          const batch = await read(part);
          if (batch.n >= rangeReadLimit) yield* readSplit(part);
          else yield* batch.chunks;
        }
        if (rest === undefined) return;
        start = rest;
      }
    }

    // The reads in flight, in the export's order; a failed one is reported when its turn comes (or
    // nobody's to report, once the client is gone and the reads are cancelled with the request).
    const reads: Array<{ range: Range; result: ReturnType<typeof read> }> = [];
    let waiting: Range[] = [];
    let lookup: ReturnType<typeof rangesAfter> | null = rangesAfter(null, null);
    const topUp = async () => {
      while (reads.length < EXPORT_PARALLEL_READS) {
        if (waiting.length === 0) {
          if (lookup === null) return;
          const found = await lookup;
          waiting = found.ranges;
          // The next bounds are looked up at once, so that they are there when these ranges are read.
          lookup = found.rest === undefined ? null : rangesAfter(found.rest, null);
          lookup?.catch(() => {});
          continue;
        }
        const range = waiting.shift() as Range;
        const result = read(range);
        result.catch(() => {});
        reads.push({ range, result });
      }
    };

    await topUp();
    for (let next = reads.shift(); next; next = reads.shift()) {
      const batch = await next.result;
      // The next reads start before this range is written, so PostgreSQL builds them meanwhile.
      await topUp();
      if (batch.n >= rangeReadLimit) yield* readSplit(next.range);
      else yield* batch.chunks;
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
      const keys = await columns.keysOf(scope);
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

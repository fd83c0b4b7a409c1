import { Type } from 'typebox';
import { csvField } from '../../../domain/csv-field.ts';
import { PROVENANCE_CSV_COLUMNS, provenanceCsv, provenanceJson } from './provenance-sql.ts';
import type { EventFilter, KeysetPosition, Sort } from '../../../domain/read/read-query.ts';
import type { EventExport, EventExporter, ExportFormat } from '../../../ports/read/event-exporter.ts';
import type { Viewer } from '../../../ports/read/event-reader.ts';
import { StatementTimeoutError } from 'slonik';
import { DomainError } from '../../../domain/errors.ts';
import { type DatabasePool, row } from '../database.ts';
import { joinSql, type Sql, sqlText, typed } from '../sql-text.ts';
import { eventsFrom } from './private-locations.ts';
import { datasetKeys } from './export-columns.ts';
import {
  type PropertyField,
  propertyFields,
  type PropertyType,
} from '../../../domain/read/typed-properties.ts';
import { typedPropertiesJson, typedPropertyText } from './cql-sql.ts';
import { ogcFilteredReads } from './ogc-filtered.ts';
import { keysetCondition, orderBy, rawConditions } from './rows.ts';
import { holding, holdSnapshot, type Snapshot } from './export-snapshot.ts';
import { readDataVersion, type Scope, scopeResolver } from './scope.ts';

// The exports of /api/v1 (docs/api-v1.md, "Exports"): the filtered events of ONE snapshot of the
// database, in ranges of about EXPORT_BATCH_SIZE events, each range read by one statement (with the
// pool's statement budget) that returns each event already written as a GeoJSON feature or a CSV
// line, so Node only joins text and passes it on.
//
// One snapshot (issue 30 §4): an export first opens a REPEATABLE READ READ ONLY transaction that
// exports its snapshot (pg_export_snapshot) and then holds it, idle, until the export ends: the
// "holder", on a pool of its own where the composition gives one, at most `maxSnapshots` at a time
// per exporter (one more is a 503 EXPORTS_BUSY). Every statement of the export runs in a short
// transaction of its own that imports that snapshot (SET TRANSACTION SNAPSHOT), so what the export
// contains is what the database held when it started, whatever is written, deleted or changed while
// it streams, and no statement runs longer than one range: a slow download costs an idle
// transaction and no statement budget. The holder's idle_in_transaction_session_timeout is
// EXPORT_SNAPSHOT_MAX_MS (SET LOCAL: whatever the pool's default), so the database ends a snapshot
// held longer than that (the export then fails and ends abnormally).
//
// The ranges' bounds come first, several at a time, from a statement that reads only the sort keys
// (`boundaries`): the positions of every EXPORT_BATCH_SIZE-th event. Knowing them, the export reads
// EXPORT_PARALLEL_READS ranges at once on their own connections, so the text is built on as many
// cores as the database has while Node writes. Memory is those ranges and the one being written,
// whatever the export's size; the next read starts only when the client has taken a range
// (backpressure). A range is (one position, the next one], both ends as keyset conditions (rows.ts);
// in one snapshot no range changes after its bounds were found. A range whose read runs out of the
// statement budget (a loaded database) is split in two and read again, down to
// EXPORT_CHUNK_EVENTS events: the snapshot makes the smaller reads give exactly the same rows.
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
 * MB during an export (docs/performance.md, "Exports"). Also the smallest range a timed-out read is
 * split into.
 */
const EXPORT_CHUNK_EVENTS = 250;

/** Ranges read at once: the 2 cores of the reference machine (docs/performance.md, "Exports"). */
const EXPORT_PARALLEL_READS = 2;

/** Range bounds found by one `boundaries` statement. */
const EXPORT_BOUNDS_PER_STATEMENT = 8;

/**
 * The longest an export holds its snapshot: 300 MB at 100 kB/s. A held snapshot keeps VACUUM from
 * removing rows deleted since, so it is bounded; the database ends the holder after this long.
 */
const EXPORT_SNAPSHOT_MAX_MS = 60 * 60 * 1000;

/**
 * Snapshots one exporter (one database) holds at a time: the per-client limit (concurrentRequests.exports, http/concurrency-limit.ts)
 * bounds one client, this the process. With the holders on the read pool itself (a replica's),
 * it stays below that pool's size, so the ranges' reads always find a connection.
 */
export const EXPORT_SNAPSHOTS = 4;

/** The CSV columns before the data keys. */
const CSV_FIXED_COLUMNS = [
  ...['id', 'title', 'eventTimestamp', 'dataset', 'catalog', 'longitude', 'latitude'],
  ...PROVENANCE_CSV_COLUMNS,
];

const LineRow = row(Type.Object({ chunk: Type.String() }));
const BoundsRow = row(Type.Object({ positions: Type.Array(Type.String()) }));

const TIMESTAMP = sqlText`to_char(e.event_timestamp at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** A GeoJSON Feature per event, as text, with the typed properties of one dataset (cql-sql.ts). */
const feature = (typed: Sql) => sqlText`'{"type":"Feature","id":' || e.id || ',"geometry":'
  || case when e.location is null then 'null'
       else '{"type":"Point","coordinates":[' || to_json(st_x(e.location))::text || ','
            || to_json(st_y(e.location))::text || ']}' end
  || ',"properties":{"title":' || coalesce(to_json(e.title)::text, 'null')
  || ',"eventTimestamp":"' || ${TIMESTAMP} || '","dataset":' || to_json(d.slug)::text
  || ',"catalog":' || to_json(c.slug)::text || ${typed} || ',"data":' || e.data::text
  || ',"provenance":' || ${provenanceJson} || '}}'`;

/** RFC 8142 (GeoJSON text sequences): each feature after a record separator, ending with a line feed. */
const sequenceRecord = (line: Sql) => sqlText`E'\x1e' || ${line} || E'\n'`;

/** Text for XML: the characters XML 1.0 does not allow (C0 controls but tab, LF and CR) removed. */
const xmlText = (text: Sql): Sql =>
  sqlText`regexp_replace(${text}, E'[\x01-\x08\x0b\x0c\x0e-\x1f]', '', 'g')`;

/**
 * A KML Placemark per event, built by PostgreSQL's XML functions (which escape text and attribute
 * values): the title as its name, the time as a TimeStamp, the dataset, catalog and each top-level
 * data key as ExtendedData, the typed properties of an export of one dataset as SchemaData of the
 * document's Schema (kmlSchema; a value that does not convert is left out), the location as a Point
 * (none without one).
 */
function placemark(fields: readonly PropertyField[]): Sql {
  const simpleData = fields.map(
    (field) => sqlText`case when ${typedPropertyText(field)} is not null then xmlelement(name "SimpleData",
      xmlattributes(${field.name}::text as name), ${xmlText(typedPropertyText(field))}) end`,
  );
  const schemaData =
    fields.length === 0
      ? sqlText`null`
      : sqlText`xmlelement(name "SchemaData", xmlattributes('#events' as "schemaUrl"), ${joinSql(simpleData, ', ')})`;
  return sqlText`xmlelement(name "Placemark", xmlattributes('event-' || e.id as id),
    xmlelement(name name, ${xmlText(sqlText`e.title`)}),
    xmlelement(name "TimeStamp", xmlelement(name "when", ${TIMESTAMP})),
    xmlelement(name "ExtendedData",
      xmlelement(name "Data", xmlattributes('dataset' as name), xmlelement(name value, d.slug)),
      xmlelement(name "Data", xmlattributes('catalog' as name), xmlelement(name value, c.slug)),
      xmlelement(name "Data", xmlattributes('provenance' as name), xmlelement(name value, ${provenanceJson})),
      (select xmlagg(xmlelement(name "Data", xmlattributes(${xmlText(sqlText`k.key`)} as name),
                                xmlelement(name value, ${xmlText(sqlText`k.value`)})) order by k.key)
       from jsonb_each_text(e.data) k),
      ${schemaData}),
    case when e.location is not null then xmlelement(name "Point", xmlelement(name coordinates,
      to_json(st_x(e.location))::text || ',' || to_json(st_y(e.location))::text)) end)::text || E'\n'`;
}

/** KML's SimpleField type of each property type (a date is ISO 8601 text: KML has no date type). */
const KML_TYPES: Record<PropertyType, string> = {
  integer: 'int',
  number: 'double',
  boolean: 'bool',
  date: 'string',
  string: 'string',
};

/** Text as an XML attribute value: escaped, the characters XML 1.0 does not allow removed. */
const xmlAttribute = (text: string) =>
  [...text]
    .filter((character) => character >= ' ' || character === '\t' || character === '\n' || character === '\r')
    .join('')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('"', '&quot;');

/** The Schema of the typed properties (none without them), which each Placemark's SchemaData names. */
function kmlSchema(fields: readonly PropertyField[]): string {
  if (fields.length === 0) return '';
  const simpleFields = fields.map(
    (field) => `<SimpleField name="${xmlAttribute(field.name)}" type="${KML_TYPES[field.type]}"/>`,
  );
  return `<Schema name="events" id="events">${simpleFields.join('')}</Schema>\n`;
}

const KML_HEAD =
  '<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="http://www.opengis.net/kml/2.2"><Document>' +
  '<name>Chronomap events</name>\n';

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
type RowText = { line: Sql; separator: string; lateral: Sql };

function csvLine(keys: string[]): RowText {
  const fixed = sqlText`e.id || ',' || ${csvText(sqlText`e.title`)} || ',' || ${TIMESTAMP} || ',' || d.slug || ',' || c.slug || ','
    || coalesce(to_json(st_x(e.location))::text, '') || ',' || coalesce(to_json(st_y(e.location))::text, '')
    || ',' || ${provenanceCsv}`;
  const cells = keys.map((key, index) => sqlText`|| ',' || ${csvCell(key, index)}`);
  // Each key is looked up once per row (offset 0 keeps the subquery from being inlined into every use).
  const columns = keys.map((key, index) => sqlText`e.data ->> ${key} as ${raw(`t${index}`)}`);
  const lateral =
    keys.length === 0 ? sqlText`` : sqlText`cross join lateral (select ${joinSql(columns, ', ')} offset 0) v`;
  return { line: sqlText`${fixed} ${joinSql(cells, ' ')} || E'\r\n'`, separator: '', lateral };
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
type ExportReadOptions = { batchSize: number; boundsPerStatement: number; smallestRange: number };

type ExporterOptions = {
  /** Where the snapshots are held (default: `pool`); a pool of their own keeps them off the reads' pool. */
  snapshotPool?: DatabasePool;
  /** Snapshots held at a time (default EXPORT_SNAPSHOTS); one more export is a 503. */
  maxSnapshots?: number;
  /** How long the database lets a snapshot be held (default EXPORT_SNAPSHOT_MAX_MS). */
  snapshotMaxMs?: number;
  reads?: ExportReadOptions;
};

const DEFAULT_READS: ExportReadOptions = {
  batchSize: EXPORT_BATCH_SIZE,
  boundsPerStatement: EXPORT_BOUNDS_PER_STATEMENT,
  smallestRange: EXPORT_CHUNK_EVENTS,
};

export function postgresEventExporter(pool: DatabasePool, options: ExporterOptions = {}): EventExporter {
  const scopes = scopeResolver(pool, {});
  const columns = datasetKeys(pool);
  const fieldsOf = ogcFilteredReads(pool).collectionFields;
  const { batchSize, boundsPerStatement, smallestRange } = options.reads ?? DEFAULT_READS;
  const snapshotPool = options.snapshotPool ?? pool;
  const maxSnapshots = options.maxSnapshots ?? EXPORT_SNAPSHOTS;
  const snapshotMaxMs = options.snapshotMaxMs ?? EXPORT_SNAPSHOT_MAX_MS;
  let held = 0;

  async function takeSnapshot(): Promise<Snapshot> {
    if (held >= maxSnapshots) {
      throw new DomainError(
        'unavailable',
        `This server is running as many exports as it can (${maxSnapshots}); retry in a few seconds`,
        { code: 'EXPORTS_BUSY' },
      );
    }
    held += 1;
    try {
      const snapshot = await holdSnapshot(snapshotPool, pool, snapshotMaxMs);
      let released = false;
      return {
        read: snapshot.read,
        async release() {
          if (released) return;
          released = true;
          held -= 1;
          await snapshot.release();
        },
      };
    } catch (error) {
      held -= 1;
      throw error;
    }
  }

  async function* batches(snapshot: Snapshot, scope: Scope, filter: EventFilter, sort: Sort, text: RowText) {
    const conditions = rawConditions(scope, filter, filter.dates);
    const after = (position: KeysetPosition | null) =>
      position ? sqlText`and ${keysetCondition(sort, position)}` : sqlText``;
    const upTo = (position: KeysetPosition | null) =>
      position ? sqlText`and not ${keysetCondition(sort, position)}` : sqlText``;

    /** The positions of every `size`-th event after `start`: `count` of them at most, none past `end`. */
    const boundaries = async (
      start: KeysetPosition | null,
      end: KeysetPosition | null,
      size: number,
      count: number,
    ) => {
      const { positions } = await snapshot.read((connection) =>
        connection.one(typed(BoundsRow)`
        select coalesce(array_agg(${positionOf(sort)} order by e.ordinal), '{}') as positions
        from (select e.*, row_number() over (order by ${orderBy(sort)}) as ordinal
              from (select ${sortColumns(sort)} from ${eventsFrom(scope)} e
                    where ${conditions} ${after(start)} ${upTo(end)}
                    order by ${orderBy(sort)} limit ${size * count}) e) e
        where e.ordinal % ${size} = 0 /* export_bounds */`),
      );
      return positions.map((position) => {
        const [id, value] = JSON.parse(position) as [number, string | number | boolean | null];
        return { id, value } satisfies KeysetPosition;
      });
    };

    /**
     * One read of a range: its events as text, in the sort's order, joined here in pieces of
     * EXPORT_CHUNK_EVENTS. One row per event, not pieces aggregated by PostgreSQL: `string_agg(...
     * order by ordinal)` over groups of a window's row numbers sorted every range's text again and
     * took about half of a fresh export's statement time (docs/performance.md, "Exports").
     */
    const read = async (range: Range): Promise<string[]> => {
      const rows = await snapshot.read((connection) =>
        // The marker first: pg_stat_activity keeps only the first 1 kB of a statement's text.
        connection.any(typed(LineRow)`/* export_range */
        select ${text.line} as chunk
        from ${eventsFrom(scope)} e join datasets d on d.id = e.dataset_id join catalogs c on c.id = e.catalog_id
        ${text.lateral}
        where ${conditions} ${after(range.from)} ${upTo(range.to)}
        order by ${orderBy(sort)}`),
      );
      const chunks: string[] = [];
      for (let at = 0; at < rows.length; at += EXPORT_CHUNK_EVENTS)
        chunks.push(
          rows
            .slice(at, at + EXPORT_CHUNK_EVENTS)
            .map((found) => found.chunk)
            .join(text.separator),
        );
      return chunks;
    };

    /** The ranges from `start` to `end`, as far as one boundaries statement sees, and where the rest begins. */
    const rangesAfter = async (
      start: KeysetPosition | null,
      end: KeysetPosition | null,
      size = batchSize,
    ) => {
      const positions = await boundaries(start, end, size, boundsPerStatement);
      const edges = [start, ...positions];
      const ranges: Range[] = positions.map((to, index) => ({ from: edges[index] ?? null, to }));
      // Fewer bounds than asked: what is left after the last one is less than a batch, the final range.
      if (positions.length < boundsPerStatement)
        return { ranges: [...ranges, { from: edges.at(-1) ?? null, to: end }], rest: undefined };
      return { ranges, rest: positions.at(-1) ?? null };
    };

    /**
     * A range of about `size` events whose read ran out of the statement budget: read again in
     * ranges of half the size (the same events: one snapshot), each split again if it too runs out,
     * down to `smallestRange`; past that the failure ends the export.
     */
    async function* readSplit(range: Range, size: number, failure: unknown): AsyncGenerator<string> {
      const half = Math.ceil(size / 2);
      if (!(failure instanceof StatementTimeoutError) || size <= smallestRange) throw failure;
      let start = range.from;
      for (;;) {
        const { ranges, rest } = await rangesAfter(start, range.to, half);
        for (const part of ranges) {
          const chunks = await read(part).catch((error: unknown) => error);
          if (Array.isArray(chunks)) yield* chunks;
          else yield* readSplit(part, half, chunks);
        }
        if (rest === undefined) return;
        start = rest;
      }
    }

    // The reads in flight, in the export's order; a failed one is reported when its turn comes (or
    // nobody's to report, once the client is gone and the reads are cancelled with the request).
    type Outcome = { chunks: string[] } | { failure: unknown };
    const reads: Array<{ range: Range; result: Promise<Outcome> }> = [];
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
        const result = read(range).then(
          (chunks) => ({ chunks }),
          (failure: unknown) => ({ failure }),
        );
        reads.push({ range, result });
      }
    };

    await topUp();
    for (let next = reads.shift(); next; next = reads.shift()) {
      const outcome = await next.result;
      // The next reads start before this range is written, so PostgreSQL builds them meanwhile.
      await topUp();
      if ('chunks' in outcome) yield* outcome.chunks;
      else yield* readSplit(next.range, batchSize, outcome.failure);
    }
  }

  return {
    versionOf: (viewer, filter) => readDataVersion(pool, viewer, filter),
    async exportEvents(viewer: Viewer, filter: EventFilter, sort: Sort, format: ExportFormat) {
      const scope = await scopes.scopeOf(viewer, filter);
      const snapshot = await takeSnapshot();
      try {
        // The version of what this snapshot holds: the key of the file the export may be kept as.
        const version = await snapshot.read((connection) => readDataVersion(connection, viewer, filter));
        // An export of one dataset carries its typed properties (typed-properties.ts); one of
        // several datasets does not, since their fields and types differ.
        const fields =
          format === 'csv' || filter.datasets.length !== 1
            ? []
            : propertyFields((await fieldsOf(viewer, filter.datasets[0] as string)) ?? []);
        if (format === 'kml') {
          const records = { line: placemark(fields), separator: '', lateral: sqlText`` };
          const text = holding(batches(snapshot, scope, filter, sort, records), snapshot);
          return {
            head: KML_HEAD + kmlSchema(fields),
            batches: text,
            separator: '',
            tail: '</Document></kml>\n',
            version,
          } satisfies EventExport;
        }
        if (format === 'geojson' || format === 'geojsonseq') {
          const line = feature(typedPropertiesJson(fields));
          if (format === 'geojsonseq') {
            const records = { line: sequenceRecord(line), separator: '', lateral: sqlText`` };
            const text = holding(batches(snapshot, scope, filter, sort, records), snapshot);
            return {
              head: '',
              batches: text,
              separator: '',
              tail: '',
              version,
              fields,
            } satisfies EventExport;
          }
          // Features joined by `,\n` within a batch, and between batches (geojsonExport's separator).
          const features = { line, separator: ',\n', lateral: sqlText`` };
          return geojsonExport(holding(batches(snapshot, scope, filter, sort, features), snapshot), version);
        }
        // Read after the snapshot was taken, so the columns hold every key of the events it sees
        // (keys written since only add an empty column).
        const keys = await columns.keysOf(scope);
        return {
          head: csvHeader(keys),
          batches: holding(batches(snapshot, scope, filter, sort, csvLine(keys)), snapshot),
          separator: '',
          tail: '',
          version,
        } satisfies EventExport;
      } catch (error) {
        await snapshot.release();
        throw error;
      }
    },
  };
}

function geojsonExport(features: AsyncIterable<string>, version: string): EventExport {
  return {
    head: '{"type":"FeatureCollection","features":[\n',
    batches: features,
    separator: ',\n',
    tail: '\n]}\n',
    version,
  };
}

import { permanent } from './failures.ts';
import { addressColumns } from './geocoding/address-template.ts';
import { MAX_CELL_CHARS, PROTOTYPE_KEYS } from './limits.ts';

// Schema detection: field types from the values, and which columns hold the timestamp, the
// coordinates, an address, a title and an id, from column names in several languages and from the
// content. Also schema drift against a dataset's current schema version under its schema mode.

type FieldType = 'integer' | 'number' | 'boolean' | 'date' | 'string' | 'empty';

export type FieldSchema = { name: string; type: FieldType; nullable: boolean };

export type FieldMapping = {
  timestamp?: string | undefined;
  latitude?: string | undefined;
  longitude?: string | undefined;
  /** One column with "lat, lon" (or "lat lon") pairs. */
  coordinates?: string | undefined;
  /** One column, several (joined with commas) or a template "{city}, {country}" (ingest/geocoding/address-template.ts). */
  address?: string | string[] | undefined;
  title?: string | undefined;
  id?: string | undefined;
};

export type DetectedSchema = { fields: FieldSchema[]; mapping: FieldMapping };

export type SchemaMode = 'strict' | 'additive' | 'flexible';

const NAME_HINTS: Record<keyof FieldMapping, string[]> = {
  timestamp: [
    'timestamp',
    'time',
    'datetime',
    'date',
    'date_time',
    'event_date',
    'event_time',
    'eventtimestamp',
    'occurred_at',
    'created_at',
    'start',
    'start_date',
    'when',
    'datum',
    'zeit',
    'zeitpunkt',
    'uhrzeit',
    'fecha',
    'hora',
    'fecha_hora',
    'heure',
    'date_heure',
    'data',
    'ora',
    'data_ora',
    'tijd',
    'tijdstip',
    'czas',
    'дата',
    'время',
    '日期',
    '时间',
    '日時',
    '日付',
  ],
  latitude: [
    'latitude',
    'lat',
    'y',
    'breite',
    'breitengrad',
    'latitud',
    'latitudine',
    'breedtegraad',
    'широта',
    '纬度',
    '緯度',
  ],
  longitude: [
    'longitude',
    'lon',
    'lng',
    'long',
    'x',
    'länge',
    'laenge',
    'längengrad',
    'laengengrad',
    'longitud',
    'longitudine',
    'lengtegraad',
    'долгота',
    '经度',
    '経度',
  ],
  coordinates: [
    'coordinates',
    'coordinate',
    'coords',
    'latlng',
    'latlon',
    'lat_lon',
    'lat_lng',
    'geo',
    'point',
    'koordinaten',
    'coordenadas',
    'coordonnées',
    'coordonnees',
    'coordinate_gps',
    'координаты',
  ],
  address: [
    'address',
    'location',
    'place',
    'place_name',
    'city',
    'street',
    'addr',
    'venue',
    'adresse',
    'ort',
    'standort',
    'stadt',
    'anschrift',
    'dirección',
    'direccion',
    'lugar',
    'ubicación',
    'ubicacion',
    'ciudad',
    'lieu',
    'ville',
    'indirizzo',
    'luogo',
    'città',
    'citta',
    'adres',
    'plaats',
    'адрес',
    'место',
    '地址',
    '地点',
    '住所',
    '場所',
  ],
  title: [
    'title',
    'name',
    'event',
    'event_name',
    'subject',
    'headline',
    'titel',
    'bezeichnung',
    'título',
    'titulo',
    'nombre',
    'titre',
    'nom',
    'titolo',
    'nome',
    'naam',
    'название',
    '标题',
    '名称',
    'タイトル',
  ],
  id: [
    'id',
    'uuid',
    'guid',
    'identifier',
    'event_id',
    'external_id',
    'record_id',
    'key',
    'kennung',
    'identificador',
    'identifiant',
    'identificativo',
    'код',
  ],
};

/** Lower case, accents kept, spaces and dashes as underscores: "Event Date" -> "event_date". */
function normaliseColumnName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const DOTTED_DATE = /^(\d{1,2})\.(\d{1,2})\.(\d{4})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const SLASHED_DATE = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;
const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BOOLEAN = /^(true|false|yes|no|ja|nein|sí|si|oui|non)$/i;
const COORDINATE_PAIR = /^\s*\(?\s*([+-]?\d{1,2}(?:\.\d+)?)\s*[,; ]\s*([+-]?\d{1,3}(?:\.\d+)?)\s*\)?\s*$/;

/**
 * Milliseconds since the epoch for the date formats we accept, or NaN: ISO 8601, `YYYY/MM/DD`,
 * European `DD.MM.YYYY` (optionally with a time) and RFC 2822 text. Dates without a zone are UTC.
 */
export function parseDateValue(text: string): number {
  const value = text.trim();
  if (value === '') return Number.NaN;
  if (ISO_DATE.test(value)) {
    const withZone =
      /(Z|[+-]\d{2}:?\d{2})$/.test(value) || value.length === 10 ? value : `${value.replace(' ', 'T')}Z`;
    return Date.parse(withZone);
  }
  const dotted = DOTTED_DATE.exec(value) ?? null;
  if (dotted) return utc(dotted[3], dotted[2], dotted[1], dotted[4], dotted[5], dotted[6]);
  const slashed = SLASHED_DATE.exec(value);
  if (slashed) return utc(slashed[1], slashed[2], slashed[3], slashed[4], slashed[5], slashed[6]);
  // RFC 2822 and similar spelled-out dates; a bare number is not a date.
  if (/[a-z]/i.test(value) && /\d{4}/.test(value)) return Date.parse(value);
  return Number.NaN;
}

function utc(
  year?: string,
  month?: string,
  day?: string,
  hour?: string,
  minute?: string,
  second?: string,
): number {
  const y = Number(year);
  const m = Number(month);
  const d = Number(day);
  if (m < 1 || m > 12 || d < 1 || d > 31) return Number.NaN;
  const millis = Date.UTC(y, m - 1, d, Number(hour ?? 0), Number(minute ?? 0), Number(second ?? 0));
  // 31.02.2026 would roll over into March: not a date.
  return new Date(millis).getUTCDate() === d ? millis : Number.NaN;
}

export function valueType(raw: string): FieldType {
  const text = raw.trim();
  if (text === '') return 'empty';
  if (INTEGER.test(text)) return 'integer';
  if (NUMBER.test(text)) return 'number';
  if (BOOLEAN.test(text)) return 'boolean';
  if (!Number.isNaN(parseDateValue(text))) return 'date';
  return 'string';
}

/** The narrowest type that holds every non-empty value seen (integer < number; anything mixed is string). */
function mergeTypes(a: FieldType, b: FieldType): FieldType {
  if (a === b || b === 'empty') return a;
  if (a === 'empty') return b;
  if ((a === 'integer' && b === 'number') || (a === 'number' && b === 'integer')) return 'number';
  return 'string';
}

/** Parses one "lat, lon" cell, or null. */
export function parseCoordinatePair(raw: string): { latitude: number; longitude: number } | null {
  const match = COORDINATE_PAIR.exec(raw);
  if (!match) return null;
  const latitude = Number(match[1]);
  const longitude = Number(match[2]);
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
  return { latitude, longitude };
}

/**
 * Detects field types and the mapping from a header and sample rows. Names decide first (in the
 * order of NAME_HINTS), then content: a column whose values are mostly dates is the timestamp; two
 * numeric columns in latitude/longitude ranges named like coordinates are the location.
 */
export function detectSchema(
  headers: string[],
  sample: string[][],
  overrides: FieldMapping = {},
): DetectedSchema {
  const types: FieldType[] = headers.map(() => 'empty');
  const nulls: boolean[] = headers.map(() => false);
  const dateHits: number[] = headers.map(() => 0);
  const pairHits: number[] = headers.map(() => 0);
  const filled: number[] = headers.map(() => 0);
  for (const row of sample) {
    for (let i = 0; i < headers.length; i++) {
      const value = row[i] ?? '';
      const type = valueType(value);
      if (type === 'empty') {
        nulls[i] = true;
        continue;
      }
      filled[i] = (filled[i] ?? 0) + 1;
      types[i] = mergeTypes(types[i] ?? 'empty', type);
      if (type === 'date') dateHits[i] = (dateHits[i] ?? 0) + 1;
      if (parseCoordinatePair(value)) pairHits[i] = (pairHits[i] ?? 0) + 1;
    }
  }
  const fields: FieldSchema[] = headers.map((name, i) => ({
    name,
    type: types[i] ?? 'empty',
    nullable: nulls[i] ?? false,
  }));

  const normalised = headers.map(normaliseColumnName);
  const taken = new Set<string>();
  const byName = (
    key: keyof FieldMapping,
    accept: (index: number) => boolean = () => true,
  ): string | undefined => {
    for (const hint of NAME_HINTS[key]) {
      const index = normalised.indexOf(hint);
      const header = headers[index];
      if (index >= 0 && header !== undefined && !taken.has(header) && accept(index)) return header;
    }
    return undefined;
  };
  // A column named like a coordinate is one when it is numeric and mostly (over half) in range:
  // the odd out-of-range value is a row error, not a reason to lose the mapping.
  const numericIn = (limit: number) => (index: number) => {
    if (types[index] !== 'integer' && types[index] !== 'number') return false;
    const values = sample.map((row) => (row[index] ?? '').trim()).filter((value) => value !== '');
    const inRange = values.filter((value) => Math.abs(Number(value)) <= limit).length;
    return inRange > 0.5 * values.length;
  };
  const mostly = (hits: number[]) => (index: number) =>
    (filled[index] ?? 0) > 0 && (hits[index] ?? 0) / (filled[index] ?? 1) >= 0.9;

  const mapping: FieldMapping = {};
  const assign = (key: Exclude<keyof FieldMapping, 'address'> | 'address', header: string | undefined) => {
    if (header === undefined) return;
    mapping[key] = header;
    taken.add(header);
  };
  for (const [key, header] of Object.entries(overrides) as [keyof FieldMapping, string | undefined][]) {
    if (key === 'address') continue;
    if (header !== undefined && headers.includes(header)) assign(key, header);
  }
  // An address from several columns or a template is taken when every column it reads is there.
  const address = overrides.address;
  if (address !== undefined && addressColumns(address).every((column) => headers.includes(column))) {
    mapping.address = typeof address === 'string' ? address : [...address];
    for (const column of addressColumns(address)) taken.add(column);
  }
  if (!mapping.timestamp) {
    assign(
      'timestamp',
      byName('timestamp', mostly(dateHits)) ?? headers.find((h, i) => !taken.has(h) && mostly(dateHits)(i)),
    );
  }
  if (!mapping.coordinates && !(mapping.latitude && mapping.longitude)) {
    const latitude = mapping.latitude ?? byName('latitude', numericIn(90));
    const longitude = mapping.longitude ?? byName('longitude', numericIn(180));
    if (latitude && longitude && latitude !== longitude) {
      assign('latitude', latitude);
      assign('longitude', longitude);
    } else {
      assign(
        'coordinates',
        byName('coordinates', mostly(pairHits)) ??
          headers.find((h, i) => !taken.has(h) && mostly(pairHits)(i)),
      );
    }
  }
  if (!mapping.address)
    assign(
      'address',
      byName('address', (i) => types[i] === 'string'),
    );
  if (!mapping.title)
    assign(
      'title',
      byName('title', (i) => types[i] === 'string'),
    );
  // No column is named like a title, but one names the place (USGS's "place": "145 km E of Hihifo,
  // Tonga"): it names the event better than "Event 4898" does, and stays the address too.
  if (!mapping.title && typeof mapping.address === 'string') mapping.title = mapping.address;
  if (!mapping.id) assign('id', byName('id'));
  return { fields, mapping };
}

export type SchemaDrift = {
  added: string[];
  removed: string[];
  changed: { name: string; from: FieldType; to: FieldType }[];
  breaking: boolean;
};

/** Compatible type changes: a wider numeric type, or a column that was always empty gaining a type. */
function widens(from: FieldType, to: FieldType): boolean {
  return from === to || from === 'empty' || to === 'empty' || (from === 'integer' && to === 'number');
}

/** Drift of `next` against the dataset's current schema; what is breaking depends on the schema mode. */
export function compareSchemas(
  current: FieldSchema[] | null,
  next: FieldSchema[],
  mode: SchemaMode,
): SchemaDrift {
  if (!current) return { added: [], removed: [], changed: [], breaking: false };
  const before = new Map(current.map((field) => [field.name, field.type]));
  const after = new Map(next.map((field) => [field.name, field.type]));
  const added = next.filter((field) => !before.has(field.name)).map((field) => field.name);
  const removed = current.filter((field) => !after.has(field.name)).map((field) => field.name);
  const changed = next.flatMap((field) => {
    const from = before.get(field.name);
    return from !== undefined && from !== field.type ? [{ name: field.name, from, to: field.type }] : [];
  });
  const incompatible = changed.some((change) => !widens(change.from, change.to));
  const breaking =
    mode === 'flexible'
      ? false
      : mode === 'additive'
        ? removed.length > 0 || incompatible
        : added.length > 0 || removed.length > 0 || changed.length > 0;
  return { added, removed, changed, breaking };
}

/** Whether anything differs: a comparison of equal schemas is a drift with nothing in it. */
export function driftHasChanges(drift: SchemaDrift): boolean {
  return drift.added.length > 0 || drift.removed.length > 0 || drift.changed.length > 0;
}

export function describeDrift(drift: SchemaDrift): string {
  const parts = [
    drift.added.length ? `added ${drift.added.join(', ')}` : '',
    drift.removed.length ? `removed ${drift.removed.join(', ')}` : '',
    drift.changed.length
      ? `changed ${drift.changed.map((c) => `${c.name} ${c.from}->${c.to}`).join(', ')}`
      : '',
  ].filter(Boolean);
  return parts.join('; ') || 'no changes';
}

/** A file must have a header and at least one column to be imported at all. */
export function assertUsableHeader(headers: string[]): void {
  if (headers.length === 0 || headers.every((h) => h.trim() === '')) {
    throw permanent('INVALID_FORMAT', 'the file has no header row');
  }
  const seen = new Set<string>();
  for (const header of headers) {
    if (PROTOTYPE_KEYS.has(header.trim())) {
      throw permanent(
        'RESERVED_COLUMN_NAME',
        `the header names a column "${header.trim()}", which cannot be a field name; rename the column`,
      );
    }
    if (header.length > MAX_CELL_CHARS) {
      throw permanent('INVALID_FORMAT', `a column name is longer than ${MAX_CELL_CHARS} characters`);
    }
    if (seen.has(header) && header !== '') {
      throw permanent('INVALID_FORMAT', `the header names column "${header}" twice`);
    }
    seen.add(header);
  }
}

import { MAX_ADDRESS_COLUMNS, MAX_ADDRESS_TEMPLATE_CHARS } from './geocoding/address-template.ts';
import { ValidationError } from '../errors.ts';
import { type DuplicateHandling, ID_STRATEGIES, type IdStrategy } from './rows.ts';
import type { FieldMapping, SchemaMode } from './schema.ts';
import type { DuplicateReview } from './review.ts';

// The import settings a user chooses on upload (or a schedule stores), validated once here.

type DatasetTarget = { datasetId: number } | { newDataset: { title: string } };

export type JobConfig = {
  fieldMapping: FieldMapping;
  idStrategy: IdStrategy;
  duplicateHandling: DuplicateHandling;
  geocoding: boolean;
  schemaMode: SchemaMode;
  /**
   * Set by a recurring source (schedule, scraper) when it creates the file, never by the user:
   * which duplicates the needs-review stage counts. Absent: all of them.
   */
  duplicateReview?: DuplicateReview;
};

export type IngestSettings = JobConfig & {
  /** Target per sheet index; sheet 0 is the only sheet of a CSV. Missing sheets get a new dataset. */
  targets: Record<number, DatasetTarget>;
};

export const DEFAULT_JOB_CONFIG: JobConfig = {
  fieldMapping: {},
  idStrategy: 'auto',
  duplicateHandling: 'skip',
  geocoding: true,
  schemaMode: 'additive',
};

const MAPPING_KEYS = ['timestamp', 'latitude', 'longitude', 'coordinates', 'address', 'title', 'id'] as const;

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string, fallback: T): T {
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new ValidationError(`${field} must be one of ${allowed.join(', ')}`, { field });
}

function parseTarget(value: unknown, field: string): DatasetTarget {
  if (value === 'new' || value === undefined || value === null) return { newDataset: { title: '' } };
  if (typeof value === 'number' && Number.isInteger(value) && value > 0) return { datasetId: value };
  if (typeof value === 'string' && /^[1-9]\d*$/.test(value)) return { datasetId: Number(value) };
  if (isObject(value) && typeof value.datasetId === 'number') return parseTarget(value.datasetId, field);
  if (isObject(value) && isObject(value.newDataset)) {
    const title = value.newDataset.title;
    if (typeof title !== 'string' || title.trim().length > 255) {
      throw new ValidationError(`${field}.newDataset.title must be a string of at most 255 characters`, {
        field,
      });
    }
    return { newDataset: { title: title.trim() } };
  }
  throw new ValidationError(`${field} must be a dataset id, "new" or {newDataset: {title}}`, { field });
}

/** fieldMapping.address: a column name, a template "{city}, {country}", or 1 to 8 column names. */
function parseAddressSpec(value: unknown): string | string[] {
  const field = 'settings.fieldMapping.address';
  if (typeof value === 'string' && value !== '' && value.length <= MAX_ADDRESS_TEMPLATE_CHARS) return value;
  if (
    Array.isArray(value) &&
    value.length >= 1 &&
    value.length <= MAX_ADDRESS_COLUMNS &&
    value.every(
      (column) => typeof column === 'string' && column !== '' && column.length <= MAX_ADDRESS_TEMPLATE_CHARS,
    )
  )
    return value as string[];
  throw new ValidationError(
    `${field} must be a column name, a template such as "{city}, {country}" (at most ${MAX_ADDRESS_TEMPLATE_CHARS} characters) or an array of 1 to ${MAX_ADDRESS_COLUMNS} column names`,
    { field },
  );
}

/** Settings from the upload's `settings` field (JSON) and its `dataset` field. */
export function parseIngestSettings(raw: unknown, dataset: unknown): IngestSettings {
  const input: Raw = raw === undefined || raw === null ? {} : isObject(raw) ? raw : notObject();
  const known = new Set([
    'fieldMapping',
    'idStrategy',
    'duplicateHandling',
    'geocoding',
    'schemaMode',
    'sheets',
    'dataset',
  ]);
  for (const key of Object.keys(input)) {
    if (!known.has(key))
      throw new ValidationError(`settings: unknown setting "${key}"`, { field: `settings.${key}` });
  }
  const mapping: FieldMapping = {};
  if (input.fieldMapping !== undefined) {
    if (!isObject(input.fieldMapping))
      throw new ValidationError('settings.fieldMapping must be an object', {
        field: 'settings.fieldMapping',
      });
    for (const [key, value] of Object.entries(input.fieldMapping)) {
      if (!(MAPPING_KEYS as readonly string[]).includes(key)) {
        throw new ValidationError(
          `settings.fieldMapping: unknown field "${key}" (known: ${MAPPING_KEYS.join(', ')})`,
          {
            field: `settings.fieldMapping.${key}`,
          },
        );
      }
      if (key === 'address') {
        mapping.address = parseAddressSpec(value);
        continue;
      }
      if (typeof value !== 'string' || value === '') {
        throw new ValidationError(`settings.fieldMapping.${key} must be a column name`, {
          field: `settings.fieldMapping.${key}`,
        });
      }
      mapping[key as Exclude<keyof FieldMapping, 'address'>] = value;
    }
  }
  if (input.geocoding !== undefined && typeof input.geocoding !== 'boolean') {
    throw new ValidationError('settings.geocoding must be true or false', { field: 'settings.geocoding' });
  }
  const targets: Record<number, DatasetTarget> = { 0: parseTarget(dataset ?? input.dataset, 'dataset') };
  if (input.sheets !== undefined) {
    if (!Array.isArray(input.sheets))
      throw new ValidationError('settings.sheets must be an array', { field: 'settings.sheets' });
    input.sheets.forEach((sheet, i) => {
      if (!isObject(sheet) || !Number.isInteger(sheet.sheetIndex) || (sheet.sheetIndex as number) < 0) {
        throw new ValidationError(`settings.sheets[${i}].sheetIndex must be a sheet number from 0`, {
          field: 'settings.sheets',
        });
      }
      targets[sheet.sheetIndex as number] = parseTarget(sheet.dataset, `settings.sheets[${i}].dataset`);
    });
  }
  return {
    fieldMapping: mapping,
    idStrategy: oneOf(input.idStrategy, ID_STRATEGIES, 'settings.idStrategy', DEFAULT_JOB_CONFIG.idStrategy),
    duplicateHandling: oneOf(
      input.duplicateHandling,
      ['skip', 'update'] as const,
      'settings.duplicateHandling',
      'skip',
    ),
    geocoding: (input.geocoding as boolean | undefined) ?? true,
    schemaMode: oneOf(
      input.schemaMode,
      ['strict', 'additive', 'flexible'] as const,
      'settings.schemaMode',
      'additive',
    ),
    targets,
  };
}

function notObject(): never {
  throw new ValidationError('settings must be a JSON object', { field: 'settings' });
}

/** The readable part of a dataset slug: lower case ASCII words of the title joined by dashes. */
function datasetSlugBase(title: string): string {
  const base = title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return base || 'dataset';
}

/** A dataset slug from a title, with a suffix for uniqueness. */
export function datasetSlug(title: string, suffix: string): string {
  return `${datasetSlugBase(title)}-${suffix}`;
}

/**
 * The slugs a new dataset tries in turn, so the first import of "earthquakes.csv" is `earthquakes`,
 * the next `earthquakes-2` and so on (slugs are unique): readable names a person can type into the
 * read API's filters, instead of a random suffix. After `attempts` numbered tries the caller falls
 * back to a random suffix.
 */
export function readableSlugCandidates(title: string, attempts = 20): string[] {
  const base = datasetSlugBase(title);
  return [base, ...Array.from({ length: attempts - 1 }, (_, i) => `${base}-${i + 2}`)];
}

/** "usgs-earthquakes.csv" -> "usgs-earthquakes"; a sheet name is appended for workbooks. */
export function datasetTitleFor(originalName: string, sheetName: string | null): string {
  const stem = originalName.replace(/\.[^.]+$/, '').trim() || 'Import';
  return (sheetName ? `${stem} - ${sheetName}` : stem).slice(0, 255);
}

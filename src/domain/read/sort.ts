import { ValidationError } from '../errors.ts';
import { DEFAULT_SORT, invalid, optionalText, parseDataPath, type Sort } from './read-query.ts';
import type { FieldWhitelist, SortKey } from './where.ts';

// The one reading of a `sort` parameter, for the collections API and the /api/v1 read API: comma-
// separated keys, each a field name with an optional leading `-` for descending order. What differs
// is which names may be sorted by, how many keys, and the error each API answers.

type SortKeyText = { name: string; descending: boolean };

function parseSortKeys(
  text: string,
  options: { maxKeys: number; refuseCount: () => never; check: (name: string) => void },
): SortKeyText[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length > options.maxKeys) options.refuseCount();
  return parts.map((part) => {
    const descending = part.startsWith('-');
    const name = descending ? part.slice(1) : part;
    options.check(name);
    return { name, descending };
  });
}

/** Collections: `sort=-createdAt` or `sort=title,-id`, up to five whitelisted, sortable fields. */
export function parseCollectionSort(raw: string | undefined, fields: FieldWhitelist): SortKey[] {
  if (raw === undefined || raw === '') return [];
  return parseSortKeys(raw, {
    maxKeys: 5,
    refuseCount: () => {
      throw new ValidationError('sort takes at most five fields', { code: 'INVALID_WHERE' });
    },
    check: (name) => {
      const spec = Object.hasOwn(fields, name) ? fields[name] : undefined;
      if (!spec || spec.sort === false) {
        throw new ValidationError(`cannot sort by "${name}"`, { field: 'sort', code: 'INVALID_SORT' });
      }
    },
  }).map(({ name, descending }) => ({ field: name, descending }));
}

export const EVENT_SORT_FIELDS = ['id', 'eventTimestamp', 'isValid', 'dataset', 'catalog', 'title'] as const;

/** The read API sorts by one key: a field of EVENT_SORT_FIELDS or `data.<field>`, `-` for descending. */
export function parseEventSort(value: unknown): Sort {
  const text = optionalText(value, 'sort') ?? DEFAULT_SORT;
  const refuse = (): never => {
    throw invalid(
      'sort',
      `sort must be one of ${EVENT_SORT_FIELDS.join(', ')} or data.<field>, optionally prefixed with - (got "${text}")`,
    );
  };
  const [{ name, descending }] = parseSortKeys(text, {
    maxKeys: 1,
    refuseCount: refuse,
    check: (candidate) => {
      if (!candidate.startsWith('data.') && !EVENT_SORT_FIELDS.some((field) => field === candidate)) refuse();
    },
  }) as [SortKeyText];
  if (name.startsWith('data.')) {
    return { key: { field: 'data', path: parseDataPath(name, 'sort') }, descending, text };
  }
  return { key: { field: name as (typeof EVENT_SORT_FIELDS)[number] }, descending, text };
}

import { invalid, type KeysetPosition, type Pagination, type Sort } from './read-query.ts';

// Keyset (cursor) paging of /api/v1/events and of the exports: a position in a sort order is the
// last event shown, by its id and its sort value. The next page is "the events after it in the
// order", which stays right when events are inserted or deleted in between (an offset shifts), and
// costs an index descent instead of reading and skipping every earlier row.
//
// The cursor a client sees is opaque: base64url of `[sort, value, id]`. It is only a position, so a
// forged one can do no harm beyond asking for another valid position; it is still checked in full.

/** Sorts that keyset paging walks: a column of the events row (a data field may be missing or mixed). */
export const CURSOR_SORT_FIELDS = ['id', 'eventTimestamp', 'dataset', 'isValid'] as const;
type CursorSortField = (typeof CURSOR_SORT_FIELDS)[number];

export type { KeysetPosition };

/** A cursor longer than this is not one of ours. */
const MAX_CURSOR_LENGTH = 256;

export function cursorSortField(sort: Sort): CursorSortField | null {
  const field = sort.key.field;
  return (CURSOR_SORT_FIELDS as readonly string[]).includes(field) ? (field as CursorSortField) : null;
}

export function encodeCursor(sort: Sort, position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([sort.text, position.value, position.id])).toString('base64url');
}

/** The `cursor` parameter for `sort`: null when absent; a 400 naming `cursor` when it is not valid. */
export function parseCursor(raw: unknown, sort: Sort): KeysetPosition | null {
  if (raw === undefined || raw === null || raw === '') return null;
  if (typeof raw !== 'string') throw invalid('cursor', 'cursor must be given once');
  const field = cursorSortField(sort);
  if (field === null)
    throw invalid(
      'cursor',
      `cursor paging supports sort ${CURSOR_SORT_FIELDS.join(', ')} (with - for descending), not "${sort.text}"`,
    );
  const refuse = (): never => {
    throw invalid('cursor', 'cursor is not a cursor this API gave (use nextCursor as it is)');
  };
  if (raw.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(raw)) refuse();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return refuse();
  }
  if (!Array.isArray(decoded) || decoded.length !== 3) return refuse();
  const [sortText, value, id] = decoded as [unknown, unknown, unknown];
  if (!Number.isSafeInteger(id) || (id as number) < 1) refuse();
  if (sortText !== sort.text)
    throw invalid(
      'cursor',
      `cursor was made for sort "${String(sortText)}"; ask with that sort or without cursor`,
    );
  if (!valueFits(field, value)) refuse();
  return { id: id as number, value: value as KeysetPosition['value'] };
}

function valueFits(field: CursorSortField, value: unknown): boolean {
  switch (field) {
    case 'id':
      return value === null;
    case 'eventTimestamp':
      // Date.parse rolls 2024-02-30 over into March; PostgreSQL refuses it: compare the fields.
      return (
        typeof value === 'string' &&
        /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(value) &&
        !Number.isNaN(Date.parse(value)) &&
        new Date(value).toISOString().slice(0, 19) === value.slice(0, 19) &&
        !value.startsWith('0000') // no year zero in PostgreSQL
      );
    case 'dataset':
      return Number.isSafeInteger(value) && (value as number) >= 1;
    case 'isValid':
      return typeof value === 'boolean';
  }
}

/** The position after `event` in `sort` (an event as /events shows it). */
export function positionAfter(
  sort: Sort,
  event: { id: number; eventTimestamp: string; isValid: boolean; dataset: { id: number } },
): KeysetPosition | null {
  switch (cursorSortField(sort)) {
    case 'id':
      return { id: event.id, value: null };
    case 'eventTimestamp':
      return { id: event.id, value: event.eventTimestamp };
    case 'dataset':
      return { id: event.id, value: event.dataset.id };
    case 'isValid':
      return { id: event.id, value: event.isValid };
    case null:
      return null;
  }
}

/**
 * The pagination object of a keyset page: the filter's total as always; no page numbers (a keyset
 * page has none); a next page when the page came full (the next one may then be empty).
 */
export function keysetPagination(
  limit: number,
  totalDocs: number,
  hasNextPage: boolean,
): Omit<Pagination, 'page'> & { page: null } {
  return {
    page: null,
    limit,
    totalDocs,
    totalPages: Math.ceil(totalDocs / limit),
    hasNextPage,
    hasPrevPage: true,
    nextPage: null,
    prevPage: null,
  };
}

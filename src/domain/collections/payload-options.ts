import { ValidationError } from '../errors.ts';
import { COLLECTION_PAGING } from './collections.ts';

// Payload CMS's list and read options beyond where/sort/paging (issue 35 §6), as @payloadcms/sdk
// sends them: `select[field]=true` (only these fields, and the id) or `select[field]=false` (all
// but these), and `pagination=false` (every matching document in one answer, up to a cap).

/**
 * The fields every document of the answer keeps (the id always among them): only ever names of the
 * document's schema, so a document sent without its schema's serializer holds nothing more.
 */
type Selection = { fields: string[] };

const SELECT_KEY = /^select\[([A-Za-z][A-Za-z0-9]*)\]$/;

function invalid(message: string): never {
  throw new ValidationError(message, { field: 'select', code: 'INVALID_SELECT' });
}

/**
 * The selection of a query (null: none), its fields checked against the document's `fields`: an
 * unknown field, a value other than true/false, or true and false mixed are a 400. Payload's nested
 * selects (`select[a][b]`) have nothing to select here (documents are flat but `data`): refused.
 */
export function parseSelect(query: Record<string, unknown>, fields: readonly string[]): Selection | null {
  const included: string[] = [];
  const excluded: string[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('select')) continue;
    const field = SELECT_KEY.exec(key)?.[1];
    if (field === undefined)
      invalid(`malformed select parameter "${key.slice(0, 80)}": use select[field]=true`);
    if (!fields.includes(field)) invalid(`select: unknown field "${field}" (fields: ${fields.join(', ')})`);
    const value = Array.isArray(raw) ? invalid(`select[${field}] is given twice`) : String(raw);
    if (value === 'true' || value === '1') included.push(field);
    else if (value === 'false' || value === '0') excluded.push(field);
    else invalid(`select[${field}] must be true or false (got "${value.slice(0, 40)}")`);
  }
  if (included.length > 0 && excluded.length > 0) invalid('select: fields are either all true or all false');
  if (included.length > 0) return { fields: ['id', ...included] };
  // Payload never leaves the id out.
  if (excluded.length > 0)
    return { fields: fields.filter((field) => field === 'id' || !excluded.includes(field)) };
  return null;
}

/** A document with the selection applied: the selected fields it has, nothing else. */
export function applySelect<T extends Record<string, unknown>>(
  doc: T,
  selection: Selection | null,
): Partial<T> {
  if (selection === null) return doc;
  return Object.fromEntries(
    Object.entries(doc).filter(([key]) => selection.fields.includes(key)),
  ) as Partial<T>;
}

/**
 * The most documents `pagination=false` answers: the largest page. A query that matches more is
 * refused (400 PAGINATION_CAP) rather than cut short or read whole: page with limit and page.
 */
export const UNPAGINATED_MAX = COLLECTION_PAGING.maxLimit;

/** `pagination`: `false` asks for every matching document in one answer; absent or `true`, pages. */
export function parsePagination(value: unknown): boolean {
  if (value === undefined || value === 'true' || value === true) return true;
  if (value === 'false' || value === false) return false;
  throw new ValidationError(`pagination must be true or false (got "${String(value).slice(0, 40)}")`, {
    field: 'pagination',
  });
}

/** The refusal of pagination=false for a query that matches more than UNPAGINATED_MAX documents. */
export function tooManyForOneAnswer(totalDocs: number): ValidationError {
  return new ValidationError(
    `pagination=false answers at most ${UNPAGINATED_MAX} documents and this query matches ${totalDocs}: ` +
      `page with limit (up to ${UNPAGINATED_MAX}) and page, or narrow where`,
    { field: 'pagination', code: 'PAGINATION_CAP' },
  );
}

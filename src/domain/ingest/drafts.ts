import { DomainError } from '../errors.ts';
import type { IngestSettings } from './settings.ts';

// The import wizard's steps on an upload that has not started: upload with `start=false` (a draft),
// configure (store the settings), validate against the file's first rows, start. The rules here
// decide whether a step may run on a draft and what is wrong with a configuration, without I/O.

/** How long an upload waits for its configuration before it expires (and its file is removed). */
export const DRAFT_TTL_MS = 24 * 60 * 60 * 1000;

/** One thing wrong with a configuration, named by the setting it is in. */
export type ConfigurationProblem = { field: string; code: string; message: string; sheetIndex?: number };

type DraftState = { startedAt: string | null; startedFileId: number | null; expiresAt: string };

/** A step on a draft: refused once the import has started (409) or the upload has expired (409). */
export function assertDraftOpen(id: number, draft: DraftState, now: Date): void {
  if (draft.startedAt !== null) {
    throw new DomainError(
      'conflict',
      `upload ${id} was started already${draft.startedFileId ? ` as ingest file ${draft.startedFileId}` : ''}: ` +
        'change its import with the ingest-jobs routes',
      { code: 'IMPORT_ALREADY_STARTED' },
    );
  }
  if (Date.parse(draft.expiresAt) <= now.getTime()) {
    throw new DomainError('conflict', `upload ${id} expired at ${draft.expiresAt}: upload the file again`, {
      code: 'UPLOAD_EXPIRED',
    });
  }
}

/** Settings that name sheets a file does not have. */
export function sheetProblems(settings: IngestSettings, sheetCount: number): ConfigurationProblem[] {
  return Object.keys(settings.targets)
    .map(Number)
    .filter((index) => index >= sheetCount)
    .map((index) => ({
      field: 'settings.sheets',
      code: 'SHEET_OUT_OF_RANGE',
      sheetIndex: index,
      message: `sheet index ${index} is out of range: the file has ${sheetCount} sheet${sheetCount === 1 ? '' : 's'} (0-${sheetCount - 1})`,
    }));
}

/**
 * Mapped columns the sheet's header does not have. A mapping names one column, or (an address from
 * several columns) a list of them; each must be in the header exactly.
 */
export function mappingProblems(
  mapping: Record<string, unknown>,
  header: readonly string[],
  sheetIndex: number,
): ConfigurationProblem[] {
  const columns = new Set(header);
  const problems: ConfigurationProblem[] = [];
  for (const [key, value] of Object.entries(mapping)) {
    const names = Array.isArray(value) ? value : [value];
    for (const name of names) {
      if (typeof name !== 'string' || columns.has(name)) continue;
      problems.push({
        field: `settings.fieldMapping.${key}`,
        code: 'MISSING_COLUMN',
        sheetIndex,
        message: `column "${name}" (${key}) is not in sheet ${sheetIndex}; its columns are ${header
          .slice(0, 50)
          .map((c) => `"${c}"`)
          .join(', ')}`,
      });
    }
  }
  return problems;
}

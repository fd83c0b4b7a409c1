import type { ImportOutcome } from '../../ports/ingest/import-listings.ts';
import { type Html, html } from './html.ts';

// A run's import outcome in a table cell, for the scheduled imports page and /account/scrapers: a
// fetch or a scraper run that "succeeded" says nothing about the rows, so the cell says what the
// import did (or that it waits for a review, and why), with the link to it on My imports.

const STATUS_WORDS: Record<ImportOutcome['status'], string> = {
  pending: 'queued',
  processing: 'importing',
  'needs-review': 'needs review',
  completed: 'completed',
  partial: 'partly completed',
  failed: 'failed',
};

/** "0 new, 3 unchanged" (and updated when any), or null before create-events completed. */
function rowCounts(outcome: ImportOutcome): string | null {
  if (outcome.rowsNew === null) return null;
  const updated = outcome.rowsUpdated ? `, ${outcome.rowsUpdated} updated` : '';
  return `${outcome.rowsNew} new${updated}, ${outcome.rowsUnchanged ?? 0} unchanged`;
}

export function importOutcomeCell(outcome: ImportOutcome | null | undefined): Html {
  if (!outcome) return html`<span class="muted">—</span>`;
  const counts = rowCounts(outcome);
  return html`<span class="badge ${outcome.status}" data-field="import-status"
      >${STATUS_WORDS[outcome.status]}</span
    >
    ${counts ? html`<span data-field="import-rows">${counts}</span>` : ''}
    ${
      outcome.reviewReasons.length
        ? html`<span class="muted" data-field="import-reasons">${outcome.reviewReasons.join('; ')}</span>`
        : ''
    }
    <a href="/account/imports#import-${outcome.ingestFile}">import #${outcome.ingestFile}</a>`;
}

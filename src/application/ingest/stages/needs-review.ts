import { reviewReasons } from '../../../domain/ingest/review.ts';
import type { ReviewOutput } from './outputs.ts';
import { outputOf, type StageContext, type TaskResult } from './stage-context.ts';

// needs-review: an automatic import (scheduled, webhook, scraper) whose file looks wrong (many
// duplicates or invalid rows, a schema drift) waits for a human; an upload's user has seen it already.

export async function needsReview(_deps: unknown, context: StageContext): Promise<TaskResult<ReviewOutput>> {
  if (context.file.source === 'upload') return { output: { reasons: [] }, skipped: true };
  const analyzed = outputOf(context, 'analyze-duplicates');
  const validated = outputOf(context, 'validate-schema');
  const reasons = reviewReasons({
    rowsTotal: analyzed.rowsTotal,
    internal: analyzed.internal,
    external: analyzed.external,
    // What the file's source decided when it created the file (a recurring source's later runs
    // count only rows repeated in the file; domain/ingest/review.ts, duplicateReviewFor).
    duplicateReview: context.job.config.duplicateReview,
    invalidRows: validated.invalidRows,
    drift: validated.drift,
  });
  if (reasons.length && !context.job.approvedAt) return { needsReview: reasons, output: { reasons } };
  return { output: { reasons } };
}

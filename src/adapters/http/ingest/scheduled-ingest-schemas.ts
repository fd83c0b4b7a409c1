import { Type } from 'typebox';
import { REVIEW_DUPLICATES, type ReviewDuplicates } from '../../../domain/ingest/review.ts';
import type { ScheduledIngest } from '../../../ports/ingest/schedule-store.ts';

// The schemas of the scheduled-import routes (scheduled-ingest-routes.ts): a schedule as the API
// shows it, the saved answer, and the body fields they take.
const NullableString = Type.Union([Type.String(), Type.Null()]);
export const ScheduleDoc = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  url: Type.String(),
  schedule: NullableString,
  enabled: Type.Boolean(),
  catalog: Type.Integer(),
  dataset: Type.Union([Type.Integer(), Type.Null()]),
  settings: Type.Object({}, { additionalProperties: true }),
  reviewDuplicates: Type.Unsafe<ReviewDuplicates>({ type: 'string', enum: [...REVIEW_DUPLICATES] }),
  nextRunAt: NullableString,
  lastRunAt: NullableString,
  lastStatus: NullableString,
  lastError: NullableString,
  createdAt: Type.String(),
  updatedAt: Type.String(),
});
export const Saved = Type.Object({
  doc: ScheduleDoc,
  message: Type.String(),
  webhookToken: Type.Optional(
    Type.String({
      description: 'The webhook token (64 hex); shown only when issued, never stored in clear.',
    }),
  ),
  webhookUrl: Type.Optional(
    Type.String({
      description:
        'The absolute URL to POST to trigger a run (PUBLIC_BASE_URL + /api/webhooks/trigger/{webhookToken}); shown once.',
    }),
  ),
});
export const NoQuery = Type.Object({}, { additionalProperties: false });
export const ReviewDuplicatesField = Type.Optional(
  Type.Unsafe<ReviewDuplicates>({
    type: 'string',
    enum: [...REVIEW_DUPLICATES],
    description:
      'When a high duplicate rate stops a run for review: `first-run` (default) counts rows the dataset ' +
      'already holds only until one run of this schedule imported into it, later runs only rows repeated ' +
      'in the file; `always` counts both on every run; `never` does not review duplicates.',
  }),
);

export const scheduleDoc = (s: ScheduledIngest) => ({
  id: s.id,
  name: s.name,
  url: s.url,
  schedule: s.schedule,
  enabled: s.enabled,
  catalog: s.catalogId,
  dataset: s.datasetId,
  settings: s.settings,
  reviewDuplicates: s.reviewDuplicates,
  nextRunAt: s.nextRunAt,
  lastRunAt: s.lastRunAt,
  lastStatus: s.lastStatus,
  lastError: s.lastError,
  createdAt: s.createdAt,
  updatedAt: s.updatedAt,
});
/** The token, and the absolute URL to POST it to (from PUBLIC_BASE_URL: public-url.ts), shown once. */

import { Type } from 'typebox';
import { REVIEW_DUPLICATES, type ReviewDuplicates } from '../../../domain/ingest/review.ts';
import type { ScheduledIngest } from '../../../ports/ingest/schedule-store.ts';
import { RecordId } from '../schemas.ts';
import { ScheduledRunDoc } from './ingest-schemas.ts';

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
const ReviewDuplicatesField = Type.Optional(
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

export const ScheduledIngestCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    url: Type.String({ minLength: 1, maxLength: 2048 }),
    schedule: Type.Optional(Type.Union([Type.String({ minLength: 9, maxLength: 120 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
    catalog: RecordId,
    dataset: Type.Optional(Type.Union([RecordId, Type.Null()])),
    settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
    reviewDuplicates: ReviewDuplicatesField,
  },
  { additionalProperties: false },
);

export const ScheduledIngestChange = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    schedule: Type.Optional(Type.Union([Type.String({ minLength: 9, maxLength: 120 }), Type.Null()])),
    enabled: Type.Optional(Type.Boolean()),
    catalog: Type.Optional(RecordId),
    dataset: Type.Optional(Type.Union([RecordId, Type.Null()])),
    settings: Type.Optional(Type.Object({}, { additionalProperties: true })),
    reviewDuplicates: ReviewDuplicatesField,
  },
  { additionalProperties: false },
);

export const ScheduledRunStarted = Type.Object({ success: Type.Literal(true), run: ScheduledRunDoc });

import { type TSchema, Type } from 'typebox';
import { CODE_LIMITS } from '../../../application/scrapers/scraper-collections.ts';
import { ENV_VARS } from '../../../domain/scrapers/scrapers.ts';
import { REVIEW_DUPLICATES, type ReviewDuplicates } from '../../../domain/ingest/review.ts';
import { ImportOutcomeDoc } from '../import-outcome-doc.ts';

// The schemas of the scraper collections (scraper-collection-routes.ts): the documents of
// scraper-repos, scrapers and scraper-runs, and the bodies that create and change them.
const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Timestamp = Type.String({ format: 'date-time' });
const strict = { additionalProperties: false } as const;
/** An id or null to clear it; `const: null` because the app's type coercion would turn 0 into null. */
const NullableId = Type.Union([Type.Integer({ minimum: 1 }), Type.Unsafe<null>({ const: null })]);
const RunStatus = Type.Union(
  ['queued', 'running', 'success', 'failed', 'timeout'].map((status) => Type.Literal(status)),
);

const ReviewDuplicatesSchema = Type.Unsafe<ReviewDuplicates>({
  type: 'string',
  enum: [...REVIEW_DUPLICATES],
  description:
    'When a high duplicate rate stops an auto-import for review: `first-run` (default) counts rows the ' +
    'target dataset already holds only until one auto-import of this scraper completed there, later runs ' +
    'only rows repeated in the output; `always` counts both on every run; `never` does not review duplicates.',
});

const ScraperRepoDoc = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    slug: Type.String(),
    sourceType: Type.Union([Type.Literal('git'), Type.Literal('upload')]),
    gitUrl: Nullable(Type.String()),
    gitBranch: Nullable(Type.String()),
    code: Type.Optional(
      Nullable(Type.Record(Type.String(), Type.String(), { description: 'On a single repo only' })),
    ),
    fileCount: Type.Optional(
      Nullable(Type.Integer({ description: 'In lists, instead of the code: its number of files' })),
    ),
    catalog: Nullable(Type.Integer()),
    createdBy: Nullable(Type.Integer()),
    syncStatus: Type.Union(
      ['pending', 'syncing', 'synced', 'failed'].map((status) => Type.Literal(status)),
      {
        description:
          'pending: a sync is queued; syncing: the sync job reads the manifest; synced: the scrapers match it; ' +
          'failed: see lastSyncError',
      },
    ),
    lastSyncAt: Nullable(Timestamp),
    lastSyncError: Nullable(
      Type.String({ description: 'Every manifest violation with its path, e.g. scrapers[2].limits.timeout' }),
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ScraperRepoDoc' },
);

const ScraperDoc = Type.Object(
  {
    id: Type.Integer(),
    repo: Type.Integer(),
    name: Type.String(),
    slug: Type.String(),
    runtime: Type.Union([Type.Literal('python'), Type.Literal('node')]),
    entrypoint: Type.String(),
    outputFile: Type.String(),
    schedule: Nullable(Type.String({ description: 'Five-field cron, UTC' })),
    enabled: Type.Boolean(),
    envVars: Type.Record(Type.String(), Type.String()),
    timeoutSecs: Type.Integer(),
    memoryMb: Type.Integer(),
    targetDataset: Nullable(Type.Integer()),
    autoImport: Type.Boolean(),
    reviewDuplicates: ReviewDuplicatesSchema,
    webhookEnabled: Type.Boolean(),
    statistics: Type.Object({
      totalRuns: Type.Integer(),
      successRuns: Type.Integer(),
      failedRuns: Type.Integer(),
      lastRunAt: Nullable(Timestamp),
      lastRunStatus: Nullable(RunStatus),
      lastRunDurationMs: Nullable(Type.Number()),
    }),
    health: Type.Object(
      {
        streak: Type.Integer({ description: 'Bad runs in a row: failed, or no output rows' }),
        last: Nullable(Type.Union([Type.Literal('failed'), Type.Literal('empty')])),
        alertAfter: Type.Integer({ description: 'The streak at which the owner is told (once per streak)' }),
      },
      { description: 'Source health (docs/ingestion.md)' },
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { $id: 'ScraperDoc' },
);

const ScraperRunDoc = Type.Object(
  {
    id: Type.Integer(),
    runId: Type.String({ description: "The runner's run_id (UUID)" }),
    scraper: Type.Integer(),
    repo: Type.Integer(),
    status: RunStatus,
    triggeredBy: Type.Union([Type.Literal('schedule'), Type.Literal('manual'), Type.Literal('webhook')]),
    triggeredByUser: Nullable(Type.Integer()),
    scheduledFor: Nullable(Timestamp),
    queuedAt: Timestamp,
    startedAt: Nullable(Timestamp),
    finishedAt: Nullable(Timestamp),
    durationMs: Nullable(Type.Number()),
    exitCode: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    errorCode: Nullable(Type.String({ description: 'e.g. CANCELLED, STUCK, INVALID_OUTPUT, IMPORT_FAILED' })),
    outputRows: Nullable(Type.Integer()),
    outputBytes: Nullable(Type.Integer()),
    ingestFile: Nullable(Type.Integer()),
    importError: Nullable(Type.String()),
    commit: Nullable(Type.String({ description: 'The git commit the run ran, as the runner reported it.' })),
    import: ImportOutcomeDoc,
    stdout: Type.Optional(Nullable(Type.String({ description: 'On a single run only' }))),
    stderr: Type.Optional(Nullable(Type.String({ description: 'On a single run only' }))),
    resultFile: Type.Optional(
      Nullable(Type.String({ description: 'The CSV, base64, when it was not imported; single run only' })),
    ),
  },
  { $id: 'ScraperRunDoc' },
);

export const scraperCollectionSchemas = [ScraperRepoDoc, ScraperDoc, ScraperRunDoc];

const Code = Type.Record(Type.String(), Type.String(), {
  maxProperties: CODE_LIMITS.maxFiles,
  propertyNames: { maxLength: CODE_LIMITS.maxFileNameLength },
  description:
    `File name -> content; scrapers.yml at the root. No "..", no leading "/", no empty names; at most ` +
    `${CODE_LIMITS.maxFiles} files and ${CODE_LIMITS.maxTotalBytes} bytes in all.`,
});
const repoFields = {
  name: Type.String({ minLength: 1, maxLength: 255 }),
  slug: Type.String({ minLength: 1, maxLength: 128, description: 'Lowercase letters, digits and hyphens' }),
  sourceType: Type.Union([Type.Literal('git'), Type.Literal('upload')]),
  gitUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'https:// only, without credentials' })),
  gitBranch: Type.Optional(Type.String({ maxLength: 200, description: 'Default main' })),
  code: Type.Optional(Code),
  catalog: Type.Optional(NullableId),
};
export const RepoCreate = Type.Object(repoFields, strict);
export const RepoUpdate = Type.Partial(Type.Object(repoFields), strict);

export const ScraperUpdate = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    envVars: Type.Optional(
      Type.Record(
        Type.String({ pattern: ENV_VARS.namePattern }),
        Type.String({ maxLength: ENV_VARS.maxValueLength }),
        {
          maxProperties: ENV_VARS.maxCount,
          additionalProperties: false,
          description: 'Environment of the scraper container; names like SHELL_NAMES',
        },
      ),
    ),
    targetDataset: Type.Optional(NullableId),
    autoImport: Type.Optional(Type.Boolean()),
    reviewDuplicates: Type.Optional(ReviewDuplicatesSchema),
    alertAfter: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        description: 'Bad runs in a row (failed, or no output rows) after which the owner is told',
      }),
    ),
    webhookEnabled: Type.Optional(
      Type.Boolean({ description: 'Turning it on answers a new token once, in webhookToken' }),
    ),
    rotateWebhookToken: Type.Optional(
      Type.Boolean({ description: 'A new token for an enabled webhook; the old one stops working' }),
    ),
  },
  strict,
);

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });
export const NoQuery = Type.Object({}, strict);

export const DepthQuery = Type.Object(
  { depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 10 })) },
  strict,
);

export const ScraperRepoSaved = Type.Object({
  doc: Type.Ref('ScraperRepoDoc'),
  message: Type.String(),
  syncQueued: Type.Boolean(),
});

export const ScraperSaved = Type.Object({
  doc: Type.Ref('ScraperDoc'),
  message: Type.String(),
  webhookToken: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
});

export const ScraperRunCancelled = Type.Object({
  doc: Type.Ref('ScraperRunDoc'),
  message: Type.String(),
  cancelled: Type.Boolean(),
});

import { ValidationError } from '../errors.ts';

// The ingestion pipeline's stages in the spec's order. Kebab-case names are current; the UPPER_CASE
// names of the earlier variant are accepted on input (reset, recovery) and shown by the earlier
// progress endpoint.

const STAGES = [
  'analyze-duplicates',
  'detect-schema',
  'validate-schema',
  'needs-review',
  'create-schema-version',
  'geocode-batch',
  'create-events',
  'completed',
  'failed',
] as const;
export type Stage = (typeof STAGES)[number];

/** The stages that are tasks (they do work and store an output); `completed` and `failed` are outcomes. */
export const TASK_STAGES = [
  'analyze-duplicates',
  'detect-schema',
  'validate-schema',
  'needs-review',
  'create-schema-version',
  'geocode-batch',
  'create-events',
] as const satisfies readonly Stage[];
export type TaskStage = (typeof TASK_STAGES)[number];

/** A stage's status; the database's check constraint (migrations/0300_ingestion.sql) says the same. */
export type StageStatus = 'pending' | 'in_progress' | 'completed' | 'skipped';

const LEGACY_STAGE_NAMES = {
  'analyze-duplicates': 'ANALYZE_DUPLICATES',
  'detect-schema': 'DETECT_SCHEMA',
  'validate-schema': 'VALIDATE_SCHEMA',
  'needs-review': 'NEEDS_REVIEW',
  'create-schema-version': 'CREATE_SCHEMA_VERSION',
  'geocode-batch': 'GEOCODE_BATCH',
  'create-events': 'CREATE_EVENTS',
  completed: 'COMPLETED',
  failed: 'FAILED',
} as const satisfies Record<Stage, string>;
type LegacyStage = (typeof LEGACY_STAGE_NAMES)[Stage];

export const STAGE_DISPLAY_NAMES: Record<TaskStage, string> = {
  'analyze-duplicates': 'Analyze duplicates',
  'detect-schema': 'Detect schema',
  'validate-schema': 'Validate schema',
  'needs-review': 'Needs review',
  'create-schema-version': 'Create schema version',
  'geocode-batch': 'Geocode',
  'create-events': 'Create events',
};

/**
 * Share of the overall progress each task stands for, roughly in proportion to the time it takes on
 * a typical file: event creation dominates, geocoding is next when it runs.
 */
export const STAGE_WEIGHTS: Record<TaskStage, number> = {
  'analyze-duplicates': 10,
  'detect-schema': 5,
  'validate-schema': 5,
  'needs-review': 0,
  'create-schema-version': 2,
  'geocode-batch': 20,
  'create-events': 58,
};

/** The earlier progress view's coarser stage names (`/api/import/{id}/progress`). */
export const IMPORT_PROGRESS_STAGE: Record<Stage, string> = {
  'analyze-duplicates': 'UPLOAD',
  'detect-schema': 'SCHEMA_DETECTION',
  'validate-schema': 'VALIDATION',
  'needs-review': 'AWAITING_APPROVAL',
  'create-schema-version': 'VALIDATION',
  'geocode-batch': 'GEOCODING',
  'create-events': 'PROCESSING',
  completed: 'COMPLETED',
  failed: 'FAILED',
};

function isStage(value: string): value is Stage {
  return (STAGES as readonly string[]).includes(value);
}

/** `detect-schema`, `DETECT_SCHEMA` or `detect_schema` -> `detect-schema`; anything else is a validation error. */
export function parseStage(value: string): Stage {
  const normalised = value.trim().toLowerCase().replaceAll('_', '-');
  if (isStage(normalised)) return normalised;
  throw new ValidationError(`"${value}" is not an ingestion stage`, { field: 'stage' });
}

export function legacyStageName(stage: Stage): LegacyStage {
  return LEGACY_STAGE_NAMES[stage];
}

/**
 * Which routes are asking: the ingest-named ones (`/api/ingest-jobs`, `/api/ingest/...`) speak
 * kebab-case stage names, the import-named ones (`/api/import-jobs`, `/api/import/...`) UPPER_CASE,
 * in every field of every answer.
 */
export type StageNaming = 'ingest' | 'import';

export function stageName(naming: StageNaming, stage: Stage): string {
  return naming === 'import' ? legacyStageName(stage) : stage;
}

/** A stage name as it may arrive in a stored record (a string): spelled for the naming, or as it is. */
export function spellStage(naming: StageNaming, value: string): string {
  const normalised = value.trim().toLowerCase().replaceAll('_', '-');
  return isStage(normalised) ? stageName(naming, normalised) : value;
}

/** Stages after `stage` in pipeline order (the ones whose progress a reset clears). */
export function stagesFrom(stage: TaskStage): TaskStage[] {
  return TASK_STAGES.slice(TASK_STAGES.indexOf(stage));
}

/** The stages `POST /api/ingest-jobs/{id}/reset` accepts. */
export const RESETTABLE_STAGES: readonly TaskStage[] = [
  'analyze-duplicates',
  'detect-schema',
  'validate-schema',
  'geocode-batch',
];

/** Either spelling is accepted; a refusal lists the allowed stages as the route's naming spells them. */
export function parseResetStage(value: string, naming: StageNaming = 'import'): TaskStage {
  const stage = parseStage(value);
  if (!(RESETTABLE_STAGES as readonly string[]).includes(stage)) {
    throw new ValidationError(
      `cannot reset to "${value}": allowed stages are ${RESETTABLE_STAGES.map((s) => stageName(naming, s)).join(', ')}`,
      { field: 'stage' },
    );
  }
  return stage as TaskStage;
}

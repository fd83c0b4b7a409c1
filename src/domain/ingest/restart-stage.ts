import { DomainError, ValidationError } from '../errors.ts';
import {
  parseResetStage,
  type Stage,
  type StageNaming,
  stageName,
  type StageStatus,
  TASK_STAGES,
  type TaskStage,
} from './stages.ts';

// Where an ingest job starts again, for every way a job is restarted: the workflow's own retry of a
// recoverable failure, the user's POST retry, the admin's re-queue, POST reset and the approval or
// reconfiguration of PATCH. One function so that the answers cannot drift apart; each way differs
// only in what it knows and how far back it has to go, which the cases below say.

/**
 * Recovery stage selection (spec): a stage whose input is the previous stage's output restarts one
 * step earlier, so that its input is rebuilt too: a new schema version is validated again, and
 * events are created from freshly geocoded rows.
 */
const RECOVERY_STAGE: Partial<Record<Stage, TaskStage>> = {
  'analyze-duplicates': 'analyze-duplicates',
  'detect-schema': 'detect-schema',
  'validate-schema': 'validate-schema',
  'create-schema-version': 'validate-schema',
  'geocode-batch': 'geocode-batch',
  'create-events': 'geocode-batch',
};

export type RestartRequest =
  /** The workflow's automatic retry: the failed task starts from its beginning, finished ones keep their output. */
  | { kind: 'automatic-retry'; failedStage: TaskStage }
  /** POST retry (a user's): the spec's recovery stage of the stage that failed. */
  | { kind: 'retry'; failedStage: Stage }
  /** An admin's re-queue: the task that failed; the recovery stage when the failure named no task. */
  | { kind: 'requeue'; failedStage: Stage | undefined }
  /** POST reset: the stage asked for, if it is one that may be reset to. */
  | { kind: 'reset'; requested: string; naming: StageNaming }
  /** PATCH: an approval continues after the review; a changed configuration starts over. */
  | {
      kind: 'revise';
      jobId: number;
      jobStage: Stage;
      approved: boolean;
      configChanged: boolean;
      failureCode: string | undefined;
      records: readonly { stage: string; status: StageStatus }[];
      naming: StageNaming;
    };

/**
 * The task a job restarts at. `null` only for a revision that changes nothing (neither approved nor
 * reconfigured). Throws a ValidationError for a stage that cannot be restarted from, and a conflict
 * for a revision of a job that is neither waiting for review nor failed.
 */
export function restartStage(request: Exclude<RestartRequest, { kind: 'revise' }>): TaskStage;
export function restartStage(request: RestartRequest): TaskStage | null;
export function restartStage(request: RestartRequest): TaskStage | null {
  switch (request.kind) {
    case 'automatic-retry':
      return request.failedStage;
    case 'retry':
      return recoveryStage(request.failedStage);
    case 'requeue': {
      const failed = request.failedStage;
      if (failed && (TASK_STAGES as readonly string[]).includes(failed)) return failed as TaskStage;
      return recoveryStage(failed ?? 'analyze-duplicates');
    }
    case 'reset':
      return parseResetStage(request.requested, request.naming);
    case 'revise':
      return revisionStage(request);
  }
}

function recoveryStage(failedStage: Stage): TaskStage {
  const stage = RECOVERY_STAGE[failedStage];
  if (!stage) {
    throw new ValidationError(`a job that failed at "${failedStage}" has no recovery stage`, {
      field: 'stage',
    });
  }
  return stage;
}

function revisionStage(request: Extract<RestartRequest, { kind: 'revise' }>): TaskStage | null {
  const { jobStage, approved, configChanged, naming } = request;
  if (jobStage === 'needs-review' && approved) {
    // A new configuration changes what every stage found, so it starts over.
    if (configChanged) return 'analyze-duplicates';
    // Continue after the stage that asked for the review.
    const done = TASK_STAGES.filter((stage) =>
      request.records.some((s) => s.stage === stage && s.status !== 'pending' && s.status !== 'in_progress'),
    );
    const last = done.at(-1) ?? 'needs-review';
    return TASK_STAGES[TASK_STAGES.indexOf(last) + 1] ?? 'create-events';
  }
  // An approved schema change is validated again against the new schema.
  if (jobStage === 'failed' && approved && request.failureCode === 'SCHEMA_DRIFT') return 'validate-schema';
  if ((jobStage === 'failed' || jobStage === 'needs-review') && configChanged) return 'analyze-duplicates';
  if (approved || configChanged) {
    throw new DomainError(
      'conflict',
      `job ${request.jobId} is at ${stageName(naming, jobStage)}: only jobs in ${stageName(naming, 'needs-review')} or ${stageName(naming, 'failed')} can be approved or reconfigured`,
      { code: 'NOT_REVISABLE' },
    );
  }
  return null;
}

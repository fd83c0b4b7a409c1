// How an ingestion failure is classified (spec: Classification, Error model) and when a recoverable
// one is retried (spec: Retry configuration). Pure: the adapters describe what went wrong as a
// FailureFacts value; this module decides what it means.

type FailureClass = 'recoverable' | 'permanent' | 'user_action_required';

export type Classification = { type: FailureClass; retryable: boolean; reason: string };

/** What is known about a failure, lifted from whatever was thrown. */
export type FailureFacts = {
  message: string;
  /** Node system error code (ECONNREFUSED), SQLSTATE (40P01) or one of ours (INVALID_FORMAT). */
  code?: string | undefined;
  /** HTTP status of an upstream answer (a geocoder, a fetched URL). */
  httpStatus?: number | undefined;
  /** An explicit class chosen where the failure was raised. */
  declared?: FailureClass | undefined;
};

/**
 * A failure whose meaning is known where it is raised (an unreadable file is permanent, a quota is a
 * user action). Thrown by domain and application code; classified without guessing.
 */
export class IngestFailure extends Error {
  readonly classification: FailureClass;
  readonly code: string;

  constructor(classification: FailureClass, code: string, message: string) {
    super(message);
    this.name = 'IngestFailure';
    this.classification = classification;
    this.code = code;
  }
}

export const permanent = (code: string, message: string) => new IngestFailure('permanent', code, message);
export const needsUser = (code: string, message: string) =>
  new IngestFailure('user_action_required', code, message);
export const transient = (code: string, message: string) => new IngestFailure('recoverable', code, message);

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'TIMEOUT',
]);
const RESOURCE_CODES = new Set(['ENOMEM', 'ENOSPC', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY']);
const PERMANENT_CODES = new Set(['ENOENT', 'EISDIR', 'EACCES', 'EPERM', 'INVALID_FORMAT', 'MISSING_CONFIG']);

/** SQLSTATE classes that pass: connection exceptions, transaction rollbacks (deadlock, serialization), resources, operator intervention. */
function isTransientSqlState(code: string): boolean {
  return /^(08|40|53|57P0[1-3])/.test(code) || code === '55P03';
}

export function classifyFailure(facts: FailureFacts): Classification {
  if (facts.declared)
    return { type: facts.declared, retryable: facts.declared !== 'permanent', reason: facts.message };
  const code = facts.code ?? '';
  const status = facts.httpStatus;
  if (status === 429) return recoverable('rate limited by the upstream service (429)');
  if (status === 401 || status === 403)
    return fixed(`the upstream service refused the credentials (${status})`);
  if (status !== undefined && status >= 500) return recoverable(`the upstream service failed (${status})`);
  if (status !== undefined && status >= 400)
    return fixed(`the upstream service rejected the request (${status})`);
  if (NETWORK_CODES.has(code)) return recoverable(`network error (${code})`);
  if (RESOURCE_CODES.has(code)) return recoverable(`temporary resource shortage (${code})`);
  if (/^[0-9A-Z]{5}$/.test(code) && isTransientSqlState(code))
    return recoverable(`database temporarily unavailable (${code})`);
  if (PERMANENT_CODES.has(code)) return fixed(`${facts.message}`);
  if (/timed? ?out|timeout/i.test(facts.message)) return recoverable('timed out');
  if (/connection (refused|reset|terminated)|socket hang up/i.test(facts.message))
    return recoverable('connection lost');
  if (/deadlock/i.test(facts.message)) return recoverable('database deadlock');
  if (/out of memory|no space left/i.test(facts.message)) return recoverable('temporary resource shortage');
  // Unknown failures are not retried blindly: a bug does not fix itself on the next attempt.
  return fixed(facts.message);
}

function recoverable(reason: string): Classification {
  return { type: 'recoverable', retryable: true, reason };
}

function fixed(reason: string): Classification {
  return { type: 'permanent', retryable: false, reason };
}

export type RetryPolicy = {
  baseDelayMs: number;
  backoffMultiplier: number;
  maxDelayMs: number;
  maxAttempts: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 30_000,
  backoffMultiplier: 2,
  maxDelayMs: 300_000,
  maxAttempts: 3,
};

/** Delay before retry number `attempt` (1-based): base * multiplier^(attempt-1), capped. */
export function retryDelayMs(policy: RetryPolicy, attempt: number): number {
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be >= 1 (got ${attempt})`);
  return Math.min(
    policy.maxDelayMs,
    Math.round(policy.baseDelayMs * policy.backoffMultiplier ** (attempt - 1)),
  );
}

/** Whether another automatic attempt is allowed after `attemptsSoFar` retries. */
export function canRetry(policy: RetryPolicy, attemptsSoFar: number): boolean {
  return attemptsSoFar < policy.maxAttempts;
}

type RecommendedAction =
  | 'automatic_retry'
  | 'wait_for_quota_reset'
  | 'manual_intervention'
  | 'approve_schema_changes'
  | 'max_retries_exceeded';

/**
 * What to do about a job that failed (spec: recommendations), in the order the conditions decide:
 * a job waiting for its scheduled retry needs nothing but time (`automatic_retry`); a quota that
 * stopped it resets (`wait_for_quota_reset`); a breaking schema change or a review waits for an
 * approval; a permanent failure or one that needs the user's fix is `manual_intervention`; a
 * recoverable one whose automatic attempts are used up is `max_retries_exceeded`.
 */
export function recommendAction(input: {
  classification: Classification;
  code?: string | undefined;
  retryAttempts: number;
  policy: RetryPolicy;
  /** The job is not failed but scheduled to run again (next_retry_at set). */
  waitingForRetry: boolean;
}): RecommendedAction {
  const { classification, code } = input;
  if (input.waitingForRetry) return 'automatic_retry';
  if (code === 'QUOTA_EXCEEDED') return 'wait_for_quota_reset';
  if (code === 'SCHEMA_DRIFT' || code === 'NEEDS_REVIEW') return 'approve_schema_changes';
  if (classification.type !== 'recoverable') return 'manual_intervention';
  if (!canRetry(input.policy, input.retryAttempts)) return 'max_retries_exceeded';
  // A recoverable failure with attempts left is retried automatically, so a failed one only has
  // attempts left when the policy was raised since: a retry by hand (POST .../retry) is the fix.
  return 'manual_intervention';
}

/** What the user does instead of a retry, for the failures that need a user action. */
const USER_FIXES: Record<string, string> = {
  SCHEMA_DRIFT:
    'the file changes the dataset\'s schema: approve the change (PATCH the job with {"approved": true}) or send a new config',
  NEEDS_REVIEW: 'the job waits for review: approve it (PATCH the job with {"approved": true})',
  MAPPING_INVALID:
    'the field mapping names a column the file does not have: PATCH the job with a corrected config.fieldMapping',
  NO_TIMESTAMP: 'no timestamp column was found: PATCH the job with config.fieldMapping.timestamp naming one',
  NO_VALID_ROWS:
    'no row passed validation: fix the file and upload it again, or PATCH the job with a corrected config',
};

/**
 * The failures of an import that a limit stopped (quota-failures.ts): the events that fit are
 * stored, and a retry continues with the rest once the limit allows (the retry takes its quotas
 * like any other import, so one that still does not fit stops again, storing nothing twice).
 */
const LIMIT_CODES = new Set(['QUOTA_EXCEEDED', 'EVENTS_PER_IMPORT_EXCEEDED']);

/**
 * Why retrying this failure would only fail again, naming what to do instead; null when a retry
 * may succeed. Decided before any quota is taken. A quota failure is retryable (after the reset:
 * the retry takes the quota like any other).
 */
export function retryRefusal(failure: {
  classification: Classification;
  code?: string | undefined;
}): string | null {
  const { classification, code } = failure;
  if (code && LIMIT_CODES.has(code)) return null;
  const fix = code ? USER_FIXES[code] : undefined;
  if (fix) return `not retryable: ${fix}`;
  if (classification.type === 'permanent' || !classification.retryable) {
    return `the failure is ${classification.type} and needs a manual fix: ${classification.reason}`;
  }
  if (classification.type === 'user_action_required') {
    return `not retryable: the failure needs a user action first: ${classification.reason}`;
  }
  return null;
}

import { canManageSchedule, requireViewer, type Viewer } from '../../domain/access.ts';
import { DomainError, NotFoundError } from '../../domain/errors.ts';
import { assertFetchableUrl, type ScheduleTrigger } from '../../domain/ingest/schedules.ts';
import type { QuotaAmount } from '../../domain/accounts/quotas.ts';
import { isWebhookTokenFormat } from '../../domain/ingest/webhook-tokens.ts';
import type { Clock } from '../../ports/clock.ts';
import type { IngestStore } from '../../ports/ingest/ingest-store.ts';
import type { Quotas } from '../../ports/accounts/quotas.ts';
import type { ScheduleQueue } from '../../ports/ingest/schedule-queue.ts';
import type { ScheduleStore, ScheduledIngest, ScheduledRun } from '../../ports/ingest/schedule-store.ts';
import type { CronSchedule } from '../../ports/cron-schedule.ts';
import { dueTime } from '../../domain/schedule-due.ts';
import type { WebhookTokens } from '../../ports/webhook-tokens.ts';
import { authorizeImportTarget, type ImportAccessDeps } from './import-access.ts';
import { changeWebhookToken } from './webhook-token-change.ts';

// Scheduled URL imports: create and change schedules (the webhook token rotates on disable and
// enable), trigger a run by hand or by webhook. Running the schedule manager and fetching are
// separate use cases. Schedules are read, changed and triggered by their creator, the owner of the
// catalog they import into and admins (401 anonymous, 404 for anyone else, as if it did not exist).

export type ScheduleDeps = {
  schedules: ScheduleStore;
  store: IngestStore;
  cron: CronSchedule;
  tokens: WebhookTokens;
  queue: ScheduleQueue;
  quotas: Quotas;
  clock: Clock;
  hierarchy: ImportAccessDeps['hierarchy'];
};

type NewSchedule = Pick<
  ScheduledIngest,
  'name' | 'url' | 'schedule' | 'enabled' | 'catalogId' | 'datasetId' | 'settings' | 'reviewDuplicates'
>;

export const ACTIVE: QuotaAmount[] = [{ quota: 'activeSchedules', amount: 1 }];

/** Runs by itself: enabled, with a cron schedule (webhook-only schedules do not count). */
export function isActive(schedule: { schedule: string | null; enabled: boolean }): boolean {
  return schedule.enabled && schedule.schedule !== null && schedule.schedule !== '';
}

function nextRun(deps: ScheduleDeps, schedule: string | null, enabled: boolean): string | null {
  if (!schedule || !enabled) return null;
  return deps.cron.nextAfter(schedule, deps.clock.now())?.toISOString() ?? null;
}

async function assertDatasetInCatalog(deps: ScheduleDeps, datasetId: number | null, catalogId: number) {
  if (datasetId !== null && !(await deps.store.datasetInCatalog(datasetId, catalogId))) {
    throw new DomainError('validation', `dataset ${datasetId} is not in catalog ${catalogId}`, {
      code: 'DATASET_NOT_IN_CATALOG',
    });
  }
}

/** Returns the schedule and its webhook token, which is shown this once. */
export async function createScheduledIngest(
  deps: ScheduleDeps,
  viewer: Viewer,
  input: NewSchedule,
): Promise<{ schedule: ScheduledIngest; webhookToken: string | null }> {
  const { userId } = await authorizeImportTarget(deps, viewer, input.catalogId);
  const url = assertFetchableUrl(input.url);
  if (input.schedule) deps.cron.validate(input.schedule);
  await assertDatasetInCatalog(deps, input.datasetId, input.catalogId);
  // A schedule that runs by itself holds one activeSchedules unit while it is enabled.
  const active = isActive(input) ? ACTIVE : [];
  if (active.length) await deps.quotas.take(userId, active);
  const { token, storedHash } = changeWebhookToken(deps.tokens, false, input.enabled);
  const schedule = await deps.schedules
    .create({
      name: input.name,
      url,
      schedule: input.schedule,
      enabled: input.enabled,
      catalogId: input.catalogId,
      datasetId: input.datasetId,
      settings: input.settings,
      reviewDuplicates: input.reviewDuplicates,
      createdBy: userId,
      nextRunAt: nextRun(deps, input.schedule, input.enabled),
      webhookTokenHash: storedHash ?? null,
    })
    .catch(async (error: unknown) => {
      if (active.length) await deps.quotas.give(userId, active);
      throw error;
    });
  return { schedule, webhookToken: token };
}

const scheduleNotFound = (id: number) =>
  new NotFoundError(`scheduled ingest ${id} does not exist`, { code: 'SCHEDULE_NOT_FOUND' });

/** The schedule, when the caller may manage it: 401 anonymous, 404 missing or not theirs. */
export async function getScheduledIngest(
  deps: Pick<ScheduleDeps, 'schedules' | 'hierarchy'>,
  viewer: Viewer,
  id: number,
): Promise<ScheduledIngest> {
  requireViewer(viewer);
  const schedule = await deps.schedules.get(id);
  if (!schedule) throw scheduleNotFound(id);
  const catalog = (await deps.hierarchy.hierarchy('catalogs', schedule.catalogId))?.catalog ?? null;
  if (!canManageSchedule(viewer, { createdBy: schedule.createdBy, catalog })) throw scheduleNotFound(id);
  return schedule;
}

type ScheduleChange = Partial<
  Pick<
    ScheduledIngest,
    'name' | 'url' | 'schedule' | 'enabled' | 'catalogId' | 'datasetId' | 'settings' | 'reviewDuplicates'
  >
> & { alertAfter?: number };

/**
 * A new catalog or dataset is checked as on creation: write access to the catalog (404 one the
 * caller cannot see, 403 one they cannot change) and a dataset of that catalog. Moving to another
 * catalog without naming a dataset means "a new dataset there" (the old one is not in it).
 */
async function changedTarget(
  deps: ScheduleDeps,
  viewer: Viewer,
  current: ScheduledIngest,
  change: ScheduleChange,
): Promise<{ catalogId: number; datasetId: number | null } | null> {
  if (change.catalogId === undefined && change.datasetId === undefined) return null;
  const catalogId = change.catalogId ?? current.catalogId;
  const moved = catalogId !== current.catalogId;
  const datasetId = change.datasetId !== undefined ? change.datasetId : moved ? null : current.datasetId;
  await authorizeImportTarget(deps, viewer, catalogId);
  await assertDatasetInCatalog(deps, datasetId, catalogId);
  return { catalogId, datasetId };
}

/**
 * Changes any of name, URL (the creation's URL checks), schedule, settings (parsed by the caller
 * with parseIngestSettings), the duplicate review, target and enabled, all or nothing. Disabling revokes the webhook
 * token; enabling issues a new one (returned this once).
 */
export async function updateScheduledIngest(
  deps: ScheduleDeps,
  viewer: Viewer,
  id: number,
  change: ScheduleChange,
): Promise<{ schedule: ScheduledIngest; webhookToken: string | null }> {
  const current = await getScheduledIngest(deps, viewer, id);
  // Everything is checked before anything changes (quota, token, row): a bad field changes nothing.
  const url = change.url === undefined ? undefined : assertFetchableUrl(change.url);
  if (change.schedule) deps.cron.validate(change.schedule);
  const target = await changedTarget(deps, viewer, current, change);
  const enabled = change.enabled ?? current.enabled;
  const schedule = change.schedule === undefined ? current.schedule : change.schedule;
  const { token, storedHash: webhookTokenHash } = changeWebhookToken(deps.tokens, current.enabled, enabled);
  // Becoming active takes an activeSchedules unit from the schedule's creator; stopping gives it back.
  const owner = current.createdBy;
  const starts = owner !== null && !isActive(current) && isActive({ schedule, enabled });
  const stops = owner !== null && isActive(current) && !isActive({ schedule, enabled });
  if (starts) await deps.quotas.take(owner, ACTIVE);
  const updated = await deps.schedules
    .update(id, {
      ...(change.name !== undefined ? { name: change.name } : {}),
      ...(url !== undefined ? { url } : {}),
      ...(change.settings !== undefined ? { settings: change.settings } : {}),
      ...(change.reviewDuplicates !== undefined ? { reviewDuplicates: change.reviewDuplicates } : {}),
      ...(change.alertAfter !== undefined ? { alertAfter: change.alertAfter } : {}),
      ...(target ?? {}),
      schedule,
      enabled,
      nextRunAt: nextRun(deps, schedule, enabled),
      ...(webhookTokenHash !== undefined ? { webhookTokenHash } : {}),
    })
    .catch(async (error: unknown) => {
      if (owner !== null && starts) await deps.quotas.give(owner, ACTIVE);
      throw error;
    });
  if (owner !== null && (stops || (starts && !updated))) await deps.quotas.give(owner, ACTIVE);
  if (!updated) throw scheduleNotFound(id);
  return { schedule: updated, webhookToken: token };
}

async function startRun(deps: ScheduleDeps, schedule: ScheduledIngest, dueAt: Date, by: ScheduleTrigger) {
  const run = await deps.schedules.claimRun(schedule.id, dueAt, by);
  if (run) await deps.queue.enqueueScheduledFetch(run.id);
  return run;
}

export async function triggerScheduledIngest(
  deps: ScheduleDeps,
  viewer: Viewer,
  id: number,
): Promise<ScheduledRun> {
  const schedule = await getScheduledIngest(deps, viewer, id);
  const run = await startRun(deps, schedule, deps.clock.now(), 'manual');
  if (!run)
    throw new DomainError('conflict', 'a run was triggered at this very moment already', {
      code: 'RUN_EXISTS',
    });
  return run;
}

/**
 * The token in the URL is the credential: unknown, malformed and disabled tokens are all a 404 whose
 * message names no resource type (the endpoint is shared with scrapers).
 */
const webhookNotFound = () =>
  new NotFoundError('unknown or disabled webhook token', { code: 'WEBHOOK_NOT_FOUND' });

export async function triggerByWebhook(deps: ScheduleDeps, token: string): Promise<ScheduledRun> {
  const notFound = webhookNotFound();
  if (!isWebhookTokenFormat(token)) throw notFound;
  const schedule = await deps.schedules.byTokenHash(deps.tokens.hash(token));
  if (!schedule || !schedule.enabled) throw notFound;
  const run = await startRun(deps, schedule, deps.clock.now(), 'webhook');
  if (!run)
    throw new DomainError('conflict', 'a run was triggered at this very moment already', {
      code: 'RUN_EXISTS',
    });
  return run;
}

/**
 * The schedule manager (every 60 s, `schedule-manager-job`): queues a run for each schedule whose
 * next run time has come, for the latest due time (the one rule of src/domain/schedule-due.ts), and
 * moves the next run time on. A run row per (schedule, due time) is claimed first, so any number of
 * managers running at once queue each due time once.
 */
export async function runScheduleManager(deps: ScheduleDeps): Promise<{ queued: number }> {
  const now = deps.clock.now();
  let queued = 0;
  for (const schedule of await deps.schedules.due(now)) {
    if (!schedule.nextRunAt || !schedule.schedule) continue;
    const due = dueTime({ schedule: schedule.schedule, from: new Date(schedule.nextRunAt) }, now, (e, at) =>
      deps.cron.previous(e, at),
    );
    if (due && (await startRun(deps, schedule, due, 'schedule'))) queued += 1;
    // Missed due times are run once, as the latest; the next time is after now.
    await deps.schedules.update(schedule.id, {
      nextRunAt: deps.cron.nextAfter(schedule.schedule, now)?.toISOString() ?? null,
    });
  }
  return { queued };
}

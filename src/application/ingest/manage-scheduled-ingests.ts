import { importVisibility, requireViewer, type Viewer } from '../../domain/access.ts';
import { type Page, pageOf } from '../../domain/collections/collections.ts';
import {
  IMPORT_LIST_LIMITS,
  SCHEDULE_DEFAULT_SORT,
  SCHEDULE_FIELDS,
} from '../../domain/ingest/import-list-fields.ts';
import { checkPageBytes } from '../../domain/read/page-bytes.ts';
import type { ImportListings, ScheduledRunRecord } from '../../ports/ingest/import-listings.ts';
import type { ScheduledIngest } from '../../ports/ingest/schedule-store.ts';
import { listPageOf, type ListQuery } from './list-imports.ts';
import { ACTIVE, getScheduledIngest, isActive, type ScheduleDeps } from './scheduled-ingests.ts';

// The scheduled imports page's use cases besides create/edit/trigger (scheduled-ingests.ts): the
// list of the schedules a caller may manage, the last runs of one with their outcome, and delete.
// Same rule as the rest: creator, catalog owner, admins; 401 anonymous, 404 for anyone else.

type ManageScheduleDeps = ScheduleDeps & { listings: ImportListings };

export async function listScheduledIngests(
  deps: Pick<ManageScheduleDeps, 'listings'>,
  viewer: Viewer,
  query: ListQuery,
): Promise<Page & { schedules: ScheduledIngest[] }> {
  const user = requireViewer(viewer);
  const page = listPageOf(query, SCHEDULE_FIELDS, SCHEDULE_DEFAULT_SORT);
  const { schedules, totalDocs } = await deps.listings.schedules(importVisibility(user), page);
  checkPageBytes(schedules, page.limit);
  return { schedules, ...pageOf(totalDocs, page.limit, page.page) };
}

export async function scheduledIngestRuns(
  deps: Pick<ManageScheduleDeps, 'listings' | 'schedules' | 'hierarchy'>,
  viewer: Viewer,
  id: number,
  limit = IMPORT_LIST_LIMITS.runsPerSchedule,
): Promise<{ schedule: ScheduledIngest; runs: ScheduledRunRecord[] }> {
  const schedule = await getScheduledIngest(deps, viewer, id);
  return {
    schedule,
    runs: await deps.listings.runsOf(id, Math.min(limit, IMPORT_LIST_LIMITS.runsPerSchedule)),
  };
}

/** Deletes the schedule and its runs (their imports stay); an active one gives its quota unit back. */
export async function deleteScheduledIngest(
  deps: ManageScheduleDeps,
  viewer: Viewer,
  id: number,
): Promise<ScheduledIngest> {
  const schedule = await getScheduledIngest(deps, viewer, id);
  const removed = await deps.listings.deleteSchedule(id);
  if (removed && isActive(schedule) && schedule.createdBy !== null) {
    await deps.quotas.give(schedule.createdBy, ACTIVE);
  }
  return schedule;
}

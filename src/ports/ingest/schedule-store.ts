import type { ScheduleTrigger } from '../../domain/ingest/schedules.ts';
import type { ReviewDuplicates } from '../../domain/ingest/review.ts';
import type { IngestSettings } from '../../domain/ingest/settings.ts';
import type { SourceHealthView } from '../../domain/source-health.ts';

export type ScheduledIngest = {
  id: number;
  name: string;
  url: string;
  schedule: string | null;
  enabled: boolean;
  catalogId: number;
  datasetId: number | null;
  settings: IngestSettings;
  reviewDuplicates: ReviewDuplicates;
  createdBy: number | null;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastStatus: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
  /** Bad runs in a row and the alert threshold (domain/source-health.ts); unset where not read. */
  health?: SourceHealthView;
};

export type ScheduledRun = {
  id: number;
  scheduledIngestId: number;
  dueAt: string;
  triggeredBy: ScheduleTrigger;
  status: 'queued' | 'fetching' | 'imported' | 'failed';
  ingestFileId: number | null;
  error: string | null;
};

type NewScheduledIngest = Omit<
  ScheduledIngest,
  'id' | 'lastRunAt' | 'lastStatus' | 'lastError' | 'createdAt' | 'updatedAt'
> & { webhookTokenHash: string | null };

export interface ScheduleStore {
  create(input: NewScheduledIngest): Promise<ScheduledIngest>;
  get(id: number): Promise<ScheduledIngest | null>;
  update(
    id: number,
    change: Partial<
      Pick<
        ScheduledIngest,
        | 'name'
        | 'url'
        | 'schedule'
        | 'enabled'
        | 'nextRunAt'
        | 'catalogId'
        | 'datasetId'
        | 'settings'
        | 'reviewDuplicates'
      >
    > & {
      webhookTokenHash?: string | null;
      /** Bad runs in a row that tell the owner (domain/source-health.ts). */
      alertAfter?: number;
    },
  ): Promise<ScheduledIngest | null>;
  /** Enabled schedules whose next run time has come. */
  due(now: Date): Promise<ScheduledIngest[]>;
  countActive(userId: number | null): Promise<number>;
  byTokenHash(hash: string): Promise<ScheduledIngest | null>;
  /** Records a run for that due time unless one exists: the one place that makes runs happen once. */
  claimRun(scheduleId: number, dueAt: Date, by: ScheduleTrigger): Promise<ScheduledRun | null>;
  getRun(id: number): Promise<ScheduledRun | null>;
  /** Whether an import of one of the schedule's runs into that dataset completed. */
  hasCompletedImport(scheduleId: number, datasetId: number): Promise<boolean>;
  finishRun(
    runId: number,
    outcome: { status: 'fetching' | 'imported' | 'failed'; ingestFileId?: number; error?: string },
  ): Promise<void>;
}

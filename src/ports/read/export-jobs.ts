import type { Viewer } from '../../domain/access.ts';
import type { RawQuery } from '../../domain/read/read-query.ts';

// Background exports of a view (issue 36 §1; application/read/background-exports.ts): the jobs that
// write a large first export into the export file store, and the queue that runs them.

export type ExportJobState = 'queued' | 'running' | 'failed' | 'done';

export type ExportJob = {
  id: string;
  exportKey: string;
  format: string;
  query: RawQuery;
  /** The requester, as the access rule reads them: the job exports exactly what they may read. */
  viewer: Viewer;
  state: ExportJobState;
  reason: string | null;
  written: number;
  estimated: number;
  attempts: number;
  /** Seconds since the running worker last renewed its lease (null when not running). */
  heartbeatAgeSeconds: number | null;
};

export interface ExportJobStore {
  /**
   * The unfinished job of this key for this requester, or a new queued one (`created`); the same
   * view requested again while it runs joins it.
   */
  startOrJoin(job: {
    exportKey: string;
    format: string;
    query: RawQuery;
    viewer: Viewer;
    estimated: number;
  }): Promise<{ job: ExportJob; created: boolean }>;
  find(id: string): Promise<ExportJob | null>;
  /** Marks the job running for one more attempt (lease renewed); false when it is finished already. */
  claim(id: string): Promise<boolean>;
  /** Renews the lease and records the progress. */
  heartbeat(id: string, written: number): Promise<void>;
  finish(
    id: string,
    outcome: { state: 'done'; written: number } | { state: 'failed'; reason: string },
  ): Promise<void>;
  /** A running job whose lease ran out goes back to queued (true), to be sent again. */
  requeueStalled(id: string, leaseSeconds: number): Promise<boolean>;
}

export interface ExportJobQueue {
  enqueue(id: string): Promise<void>;
}

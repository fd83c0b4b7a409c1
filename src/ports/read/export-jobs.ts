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
  /**
   * Running: seconds since its worker last renewed the lease; queued: since it was queued or last
   * sent again; null when finished.
   */
  idleSeconds: number | null;
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
  /**
   * Marks the job running for one more attempt (lease renewed) when it is queued, or running with a
   * lease older than `leaseSeconds` (its worker stopped); false otherwise: finished, or another
   * worker holds it.
   */
  claim(id: string, leaseSeconds: number): Promise<boolean>;
  /** Renews the lease and records the progress. */
  heartbeat(id: string, written: number): Promise<void>;
  finish(
    id: string,
    outcome: { state: 'done'; written: number } | { state: 'failed'; reason: string },
  ): Promise<void>;
  /**
   * A running job whose lease is older than `idleSeconds`, or a queued one not sent for that long,
   * is (again) queued and marked sent now (true), to be sent again; false when another caller did it
   * first or it moved on.
   */
  requeueStalled(id: string, idleSeconds: number): Promise<boolean>;
}

export interface ExportJobQueue {
  enqueue(id: string): Promise<void>;
}

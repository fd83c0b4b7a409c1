import type { Job, PgBoss } from 'pg-boss';
import type { QueryCanceller } from '../postgres/query-cancellation.ts';

// One worker per job, also across a shutdown (issue 32 §1). pg-boss's stop() waits for running
// handlers for its grace, then fails their jobs (which makes them available to another worker) and
// only then aborts their signals: a handler that ignored the signal (an import did) went on writing
// beside the worker that took its job over. Here every handler of a worker process runs so that it
// has stopped, and its statements with it, before pg-boss hands its job back:
//
// 1. on shutdown each running job's `signal` is aborted (the ingest stages stop at their next batch
//    boundary and throw, so the job fails into its retry and resumes where its last batch
//    committed);
// 2. a job still running after JOB_STOP_GRACE_MS has its statements cancelled and any further one
//    refused (the query-cancellation scope a job runs in, as a request does);
// 3. pg-boss's own stop comes after (compose.ts), so its failWip finds no job still running and
//    fails nothing: the jobs were failed into their retries by their handlers' throws, after the
//    handlers' last statement. (A handler still busy without the database after both waits, say a
//    fetch, is failed by pg-boss then; its statements stay refused.)
//
// Fetching stops first (offWork), so no job is taken once the shutdown began.
//
// A job whose claim pg-boss finds gone (another worker holds it now, or the handler outlived the
// job's expiry) has its statements cancelled at once too. A process killed with SIGKILL stops its
// statements with it (PostgreSQL ends the backends of a closed connection), and its jobs are failed
// by pg-boss's heartbeat supervision as before.

/** How long running jobs get to stop at a boundary of their own after a shutdown begins. */
const JOB_STOP_GRACE_MS = 2_000;
/** Then how long their cancelled statements get to end. */
const JOB_CANCEL_WAIT_MS = 3_000;

type JobStops = {
  /**
   * Aborts every running job's signal, cancels the statements of those still running after the
   * grace, and resolves once all have settled (or the cancel's wait is over).
   */
  stop(): Promise<{ running: number; cancelled: number; stillRunning: number }>;
};

type Running = { scope: ReturnType<QueryCanceller['newScope']>; settled: Promise<void> };

type Handler = (jobs: Job[]) => Promise<unknown>;

/**
 * Makes every handler registered on `boss` from now on (boss.work) stoppable as above. `canceller`
 * must be installed on the pools the handlers' statements run on.
 */
export function stopJobsWithProcess(boss: PgBoss, canceller: QueryCanceller): JobStops {
  const shutdown = new AbortController();
  const running = new Set<Running>();
  const queues = new Set<string>();
  const work = boss.work.bind(boss) as (name: string, ...args: unknown[]) => Promise<string>;

  const stoppable = (handler: Handler) => async (jobs: Job[]) => {
    const scope = canceller.newScope();
    // The claims pg-boss watches: one gone means another worker may hold the job now.
    const claims = AbortSignal.any(jobs.map((job) => job.signal));
    const onClaimLost = () => void canceller.cancel(scope);
    claims.addEventListener('abort', onClaimLost, { once: true });
    for (const job of jobs) job.signal = AbortSignal.any([job.signal, shutdown.signal]);
    let settle = () => {};
    const entry: Running = { scope, settled: new Promise<void>((resolve) => (settle = resolve)) };
    running.add(entry);
    try {
      return await new Promise((resolve, reject) =>
        canceller.enter(scope, () => void handler(jobs).then(resolve, reject)),
      );
    } finally {
      claims.removeEventListener('abort', onClaimLost);
      running.delete(entry);
      settle();
    }
  };

  boss.work = ((name: string, ...args: unknown[]) => {
    const handler = args.pop() as Handler;
    queues.add(name);
    return work(name, ...args, stoppable(handler));
  }) as PgBoss['work'];

  return {
    async stop() {
      await Promise.all([...queues].map((name) => boss.offWork(name, { wait: false })));
      shutdown.abort(new Error('the process is shutting down'));
      const count = running.size;
      if (await allSettledWithin(running, JOB_STOP_GRACE_MS))
        return { running: count, cancelled: 0, stillRunning: 0 };
      const late = [...running];
      await Promise.all(late.map((entry) => canceller.cancel(entry.scope)));
      await allSettledWithin(running, JOB_CANCEL_WAIT_MS);
      return { running: count, cancelled: late.length, stillRunning: running.size };
    },
  };
}

async function allSettledWithin(running: Set<Running>, ms: number): Promise<boolean> {
  if (running.size === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = Promise.all([...running].map((entry) => entry.settled)).then(() => true as const);
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

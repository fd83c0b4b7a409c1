import t from 'tap';
import { testDatabase } from '../../helpers/database.ts';
import { pythonRepo, scraperDeps, syncedScraper } from './scraper-fixtures.ts';

// A run's status moves queued -> running -> success | failed | timeout, and a queued run may fail
// without running. The run store decides it: each update names the status it moves from, so a
// second worker, a late runner answer or a cancel that loses the race changes nothing.

const outcome = (status: 'success' | 'failed' | 'timeout') => ({
  status,
  exitCode: status === 'success' ? 0 : 1,
  durationMs: 5,
  stdout: '',
  stderr: '',
  error: status === 'success' ? null : status,
  errorCode: null,
  outputRows: 0,
  outputBytes: 0,
  resultFile: null,
});

t.test(
  'run transitions: queued -> running -> success|failed|timeout; finished runs never change',
  async (t) => {
    const db = await testDatabase(t);
    const deps = await scraperDeps(t, db);
    const { owner, scraper } = await syncedScraper(deps, db.pool, pythonRepo('print(1)'));
    const queue = async () => {
      const run = await deps.runs.createQueued({
        scraperId: scraper.id,
        runId: crypto.randomUUID(),
        triggeredBy: 'manual',
        triggeredByUser: owner.id,
        scheduledFor: null,
      });
      if (!run) throw new Error('no run was queued');
      return run;
    };
    const statusOf = async (id: number) => (await deps.runs.get(id))?.status;

    for (const end of ['success', 'failed', 'timeout'] as const) {
      const run = await queue();
      t.notOk(
        await deps.runs.finish(run.id, 'running', outcome(end)),
        `queued -> ${end} needs running first`,
      );
      t.equal(await statusOf(run.id), 'queued');
      t.ok(await deps.runs.start(run.id), 'queued -> running');
      t.notOk(await deps.runs.start(run.id), 'a running run is not started again');
      t.ok(await deps.runs.finish(run.id, 'running', outcome(end)), `running -> ${end}`);
      t.equal(await statusOf(run.id), end);
      t.notOk(await deps.runs.start(run.id), `${end} -> running refused`);
      t.notOk(await deps.runs.finish(run.id, 'running', outcome('failed')), `${end} never changes again`);
      t.equal(await statusOf(run.id), end);
    }

    const refused = await queue();
    t.ok(await deps.runs.finish(refused.id, 'queued', outcome('failed')), 'queued -> failed without running');
    t.equal(await statusOf(refused.id), 'failed');
    t.notOk(await deps.runs.start(refused.id), 'a failed run never runs');
  },
);

import t from 'tap';
import { executeScraperRun } from '../../../../src/application/scrapers/execute-scraper-run.ts';
import type { RunStatus } from '../../../../src/domain/scrapers/runs.ts';
import type { RunOutcome, Scraper, ScraperRun } from '../../../../src/domain/scrapers/scrapers.ts';
import type { IngestFileCreator } from '../../../../src/ports/ingest/ingest-file-creator.ts';
import { type RunnerClient } from '../../../../src/ports/scrapers/runner-client.ts';
import { RunnerError } from '../../../../src/domain/scrapers/runner-failures.ts';
import { fakeQuotas } from '../../../helpers/quotas.ts';

// The execution use case with hand-written fakes: the paths a real runner cannot be made to take
// on demand (an answer that never comes, so the main application stops the run itself).

const scraper: Scraper = {
  id: 1,
  repoId: 1,
  name: 'S',
  slug: 's',
  runtime: 'python',
  entrypoint: 'main.py',
  outputFile: 'data.csv',
  schedule: null,
  scheduleSince: '2026-01-01T00:00:00.000Z',
  enabled: true,
  envVars: { A: '1' },
  timeoutSecs: 10,
  memoryMb: 64,
  targetDatasetId: null,
  autoImport: false,
  reviewDuplicates: 'first-run',
  webhookEnabled: false,
  statistics: {
    totalRuns: 0,
    successRuns: 0,
    failedRuns: 0,
    lastRunAt: null,
    lastRunStatus: null,
    lastRunDurationMs: null,
  },
};

function fakes(runner: RunnerClient, options: { scraper?: Scraper; importedBefore?: boolean } = {}) {
  const run: ScraperRun = {
    id: 9,
    runId: '00000000-0000-4000-8000-000000000009',
    scraperId: 1,
    status: 'queued',
    triggeredBy: 'manual',
    triggeredByUser: 5,
    scheduledFor: null,
    queuedAt: '2026-01-01T00:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    durationMs: null,
    exitCode: null,
    stdout: null,
    stderr: null,
    error: null,
    errorCode: null,
    outputRows: null,
    outputBytes: null,
    resultFile: null,
    ingestFileId: null,
  };
  const outcomes: RunOutcome[] = [];
  const asked: { scraperId: number; datasetId: number }[] = [];
  const imports: Parameters<IngestFileCreator['createFromCsv']>[0][] = [];
  const deps = {
    runs: {
      get: async () => ({ ...run }),
      start: async () => {
        if (run.status !== 'queued') return false;
        run.status = 'running';
        return true;
      },
      finish: async (_id: number, from: RunStatus, outcome: RunOutcome) => {
        if (run.status !== from) return false;
        run.status = outcome.status;
        outcomes.push(outcome);
        return true;
      },
      createQueued: async () => null,
      recordImport: async () => {},
      hasCompletedImport: async (scraperId: number, datasetId: number) => {
        asked.push({ scraperId, datasetId });
        return options.importedBefore ?? false;
      },
      listRunning: async () => [],
    },
    scrapers: { get: async () => options.scraper ?? scraper } as never,
    repos: {
      get: async () => ({
        id: 1,
        name: 'r',
        slug: 'r',
        sourceType: 'upload' as const,
        gitUrl: null,
        gitBranch: null,
        code: { 'main.py': 'print(1)' },
        catalogId: null,
        createdBy: 5,
        syncStatus: 'synced' as const,
        lastSyncAt: null,
        lastSyncError: null,
      }),
    } as never,
    runner,
    flags: { isEnabled: async () => true },
    quotas: fakeQuotas(),
    actors: { find: async () => ({ id: 5, role: 'user' as const, trustLevel: 3 }) },
    ingest: {
      createFromCsv: async (input: Parameters<IngestFileCreator['createFromCsv']>[0]) => {
        imports.push(input);
        return { id: 1 };
      },
    },
    clock: { now: () => new Date('2026-01-01T00:00:00Z') },
  };
  return { deps, run, outcomes, asked, imports };
}

t.test(
  'a runner that never answers: the run is stopped there and recorded as an overrun timeout',
  async (t) => {
    const stopped: string[] = [];
    const requests: unknown[] = [];
    const runner: RunnerClient = {
      run: async (request) => {
        requests.push(request);
        throw new RunnerError('aborted', 'gave up waiting for the runner');
      },
      stop: async (runId) => {
        stopped.push(runId);
        return 'stopping';
      },
      status: async () => ({ active: true }),
    };
    const { deps, run, outcomes } = fakes(runner);
    t.same(await executeScraperRun(deps, run.id), {
      outcome: 'finished',
      status: 'timeout',
      imported: false,
    });
    t.same(stopped, [run.runId]);
    t.match(outcomes, [{ status: 'timeout', errorCode: 'OVERRUN' }]);
    t.match(requests, [
      {
        runId: run.runId,
        runtime: 'python',
        entrypoint: 'main.py',
        outputFile: 'data.csv',
        source: { code: { 'main.py': 'print(1)' } },
        env: { A: '1' },
        timeoutSecs: 10,
        memoryMb: 64,
      },
    ]);
  },
);

t.test('an unexpected error still ends the run, and is rethrown for the job log', async (t) => {
  const runner: RunnerClient = {
    run: async () => {
      throw new TypeError('boom');
    },
    stop: async () => 'not_found',
    status: async () => ({ active: false }),
  };
  const { deps, run, outcomes } = fakes(runner);
  await t.rejects(executeScraperRun(deps, run.id), TypeError);
  t.match(outcomes, [{ status: 'failed', errorCode: 'INTERNAL' }]);
});

t.test(
  "an auto-import reviews the dataset's rows until one of the scraper's imports there completed",
  async (t) => {
    const runner: RunnerClient = {
      run: async () => ({
        status: 'success',
        exitCode: 0,
        durationMs: 5,
        stdout: '',
        stderr: '',
        output: { rows: 1, bytes: 4, contentBase64: Buffer.from('a\n1\n').toString('base64') },
      }),
      stop: async () => 'not_found',
      status: async () => ({ active: false }),
    };
    const importing = (reviewDuplicates: Scraper['reviewDuplicates']): Scraper => ({
      ...scraper,
      autoImport: true,
      targetDatasetId: 4,
      reviewDuplicates,
    });
    const cases: [Scraper['reviewDuplicates'], boolean, string][] = [
      ['first-run', false, 'all'],
      ['first-run', true, 'internal'],
      ['always', true, 'all'],
      ['never', false, 'none'],
    ];
    for (const [setting, importedBefore, expected] of cases) {
      const { deps, run, asked, imports } = fakes(runner, { scraper: importing(setting), importedBefore });
      t.match(await executeScraperRun(deps, run.id), { outcome: 'finished', imported: true });
      t.same(asked, [{ scraperId: 1, datasetId: 4 }], 'asks about the scraper and its target dataset');
      t.match(
        imports,
        [{ datasetId: 4, duplicateReview: expected }],
        `${setting}, imported before: ${importedBefore}`,
      );
    }
  },
);

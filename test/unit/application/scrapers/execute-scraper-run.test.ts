import t from 'tap';
import { executeScraperRun } from '../../../../src/application/scrapers/execute-scraper-run.ts';
import type { Scraper } from '../../../../src/domain/scrapers/scrapers.ts';
import type { IngestFileCreator } from '../../../../src/ports/ingest/ingest-file-creator.ts';
import { type RunnerClient } from '../../../../src/ports/scrapers/runner-client.ts';
import { RunnerError } from '../../../../src/domain/scrapers/runner-failures.ts';
import { outcome } from '../../../contracts/scrapers/scraper-store-harness.ts';
import { OWNER, ownedScraper, scraperUseCaseDeps } from './scraper-use-case-fakes.ts';

// The execution use case on the shared in-memory stores, with hand-written runners: the paths a real
// runner cannot be made to take on demand (an answer that never comes, so the main application
// stops the run itself).

type Settings = Partial<Pick<Scraper, 'targetDatasetId' | 'autoImport' | 'reviewDuplicates'>>;

/** A queued manual run of OWNER's scraper; `importedInto` lists datasets an earlier run's import completed in. */
async function fakes(runner: RunnerClient, options: { settings?: Settings; importedInto?: number[] } = {}) {
  const base = scraperUseCaseDeps();
  const { scraper } = await ownedScraper(base, { timeoutSecs: 10, memoryMb: 64 });
  await base.scrapers.update(scraper.id, { envVars: { A: '1' }, ...options.settings });
  const queue = async () => {
    const queued = await base.runs.createQueued({
      scraperId: scraper.id,
      runId: base.runIds.next(),
      triggeredBy: 'manual',
      triggeredByUser: OWNER.id,
      scheduledFor: null,
    });
    if (!queued) throw new Error('a manual run is always queued');
    return queued;
  };
  for (const datasetId of options.importedInto ?? []) {
    const earlier = await queue();
    await base.runs.start(earlier.id);
    await base.runs.finish(earlier.id, 'running', outcome('success'));
    await base.runs.recordImport(earlier.id, { ingestFileId: base.addImport(datasetId, true) });
  }
  const run = await queue();
  const imports: Parameters<IngestFileCreator['createFromCsv']>[0][] = [];
  const ingest: IngestFileCreator = {
    createFromCsv: async (input) => {
      imports.push(input);
      return { id: 1 };
    },
  };
  return { deps: { ...base, runner, ingest }, run, imports };
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
    const { deps, run } = await fakes(runner);
    t.same(await executeScraperRun(deps, run.id), {
      outcome: 'finished',
      status: 'timeout',
      imported: false,
    });
    t.same(stopped, [run.runId]);
    t.match(await deps.runs.get(run.id), { status: 'timeout', errorCode: 'OVERRUN' });
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
  const { deps, run } = await fakes(runner);
  await t.rejects(executeScraperRun(deps, run.id), TypeError);
  t.match(await deps.runs.get(run.id), { status: 'failed', errorCode: 'INTERNAL' });
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
    const importing = (reviewDuplicates: Scraper['reviewDuplicates']): Settings => ({
      autoImport: true,
      targetDatasetId: 4,
      reviewDuplicates,
    });
    // Datasets an earlier run of the scraper imported into (completed) before this run.
    const cases: [Scraper['reviewDuplicates'], number[], string][] = [
      ['first-run', [], 'all'],
      ['first-run', [7], 'all'],
      ['first-run', [4], 'internal'],
      ['always', [4], 'all'],
      ['never', [], 'none'],
    ];
    for (const [setting, importedInto, expected] of cases) {
      const { deps, run, imports } = await fakes(runner, { settings: importing(setting), importedInto });
      t.match(await executeScraperRun(deps, run.id), { outcome: 'finished', imported: true });
      t.match(
        imports,
        [{ datasetId: 4, duplicateReview: expected }],
        `${setting}, imported before into: ${importedInto.join(', ') || 'none'}`,
      );
    }
  },
);

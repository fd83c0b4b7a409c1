import { QuotaExceededError } from '../../domain/accounts/quotas.ts';
import { hasScraperAccess } from '../../domain/access.ts';
import { duplicateReviewFor } from '../../domain/ingest/review.ts';
import { overrunDeadlineMs } from '../../domain/scrapers/runs.ts';
import type { RunOutcome, Scraper, ScraperRun } from '../../domain/scrapers/scrapers.ts';
import { type RunnerRunResult } from '../../ports/scrapers/runner-client.ts';
import { RunnerError } from '../../domain/scrapers/runner-failures.ts';
import type { ScraperDeps } from './scraper-deps.ts';

type ExecutionResult =
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'refused'; code: string }
  | { outcome: 'finished'; status: RunOutcome['status']; imported: boolean };

type Deps = Pick<
  ScraperDeps,
  'runs' | 'scrapers' | 'repos' | 'runner' | 'flags' | 'quotas' | 'actors' | 'ingest' | 'clock'
>;

/**
 * `scraper-execution-job`: runs one queued run through the runner and records what happened.
 * Nothing reaches the runner while the flag is off, the owner's daily runs are spent, or the run
 * was cancelled. A run the runner does not answer within timeout + margin is stopped there.
 */
export async function executeScraperRun(deps: Deps, runId: number): Promise<ExecutionResult> {
  const run = await deps.runs.get(runId);
  if (!run) return { outcome: 'skipped', reason: 'run not found' };
  if (run.status !== 'queued') return { outcome: 'skipped', reason: `run is ${run.status}` };

  const refuse = async (code: string, error: string): Promise<ExecutionResult> => {
    await deps.runs.finish(run.id, 'queued', failure(code, error));
    return { outcome: 'refused', code };
  };

  if (!(await deps.flags.isEnabled('enableScrapers'))) {
    return refuse('SCRAPERS_DISABLED', 'scrapers are not enabled on this instance; the run was not started');
  }
  const scraper = await deps.scrapers.get(run.scraperId);
  if (!scraper) return { outcome: 'skipped', reason: 'scraper deleted' };
  const repo = await deps.repos.get(scraper.repoId);
  const owner = repo?.createdBy ? await deps.actors.find(repo.createdBy) : null;
  if (!repo || !owner || !hasScraperAccess(owner)) {
    return refuse('FORBIDDEN', "the repo's owner has no scraper access");
  }
  if (!deps.runner)
    return refuse('RUNNER_UNAVAILABLE', 'no scraper runner is configured (SCRAPER_RUNNER_URL)');
  try {
    await deps.quotas.take(owner.id, [{ quota: 'scraperRunsPerDay', amount: 1 }]);
  } catch (error) {
    if (!(error instanceof QuotaExceededError)) throw error;
    return refuse('QUOTA_EXCEEDED', `the daily limit of ${error.limit} scraper runs is reached; not run`);
  }
  if (!(await deps.runs.start(run.id))) return { outcome: 'skipped', reason: 'run left the queue meanwhile' };

  const deadline = AbortSignal.timeout(overrunDeadlineMs(scraper.timeoutSecs));
  let result: RunnerRunResult;
  try {
    result = await deps.runner.run(
      {
        runId: run.runId,
        runtime: scraper.runtime,
        entrypoint: scraper.entrypoint,
        outputFile: scraper.outputFile,
        source:
          repo.sourceType === 'upload'
            ? { code: repo.code ?? {} }
            : { codeUrl: `${repo.gitUrl ?? ''}#${repo.gitBranch ?? 'main'}` },
        env: scraper.envVars,
        timeoutSecs: scraper.timeoutSecs,
        memoryMb: scraper.memoryMb,
      },
      deadline,
    );
  } catch (error) {
    const outcome = runnerFailure(error);
    if (outcome.errorCode === 'OVERRUN') await deps.runner.stop(run.runId).catch(() => 'not_found');
    await deps.runs.finish(run.id, 'running', outcome);
    if (!(error instanceof RunnerError)) throw error;
    return { outcome: 'finished', status: outcome.status, imported: false };
  }

  const recorded = await deps.runs.finish(run.id, 'running', {
    status: result.status,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    stdout: result.stdout,
    stderr: result.stderr,
    error:
      result.status === 'success' ? null : (result.error ?? `the scraper ended with status ${result.status}`),
    errorCode: result.status === 'success' ? null : (result.code ?? null),
    outputRows: result.output?.rows ?? null,
    outputBytes: result.output?.bytes ?? null,
    resultFile: result.output?.contentBase64 ?? null,
    commit: result.commit ?? null,
  });
  if (!recorded) return { outcome: 'skipped', reason: 'run was cancelled while running' };

  if (
    result.status !== 'success' ||
    !result.output ||
    !scraper.autoImport ||
    scraper.targetDatasetId === null
  ) {
    return { outcome: 'finished', status: result.status, imported: false };
  }
  const imported = await autoImport(
    deps,
    run,
    scraper,
    scraper.targetDatasetId,
    owner.id,
    result.output.contentBase64,
  );
  return { outcome: 'finished', status: result.status, imported };
}

async function autoImport(
  deps: Pick<Deps, 'ingest' | 'runs' | 'clock'>,
  run: ScraperRun,
  scraper: Pick<Scraper, 'id' | 'slug' | 'reviewDuplicates'>,
  datasetId: number,
  ownerId: number,
  contentBase64: string,
): Promise<boolean> {
  try {
    // Once a run's import completed into the dataset, its rows there are this scraper's own output.
    const importedBefore = await deps.runs.hasCompletedImport(scraper.id, datasetId);
    const { id } = await deps.ingest.createFromCsv({
      csv: Buffer.from(contentBase64, 'base64'),
      originalName: `${scraper.slug}-${deps.clock.now().toISOString().replaceAll(':', '-')}.csv`,
      datasetId,
      createdBy: ownerId,
      duplicateReview: duplicateReviewFor(scraper.reviewDuplicates, importedBefore),
    });
    await deps.runs.recordImport(run.id, { ingestFileId: id });
    return true;
  } catch (error) {
    // The CSV stays on the run so nothing is lost; the run itself did succeed.
    await deps.runs.recordImport(run.id, {
      error: `auto-import failed: ${error instanceof Error ? error.message : String(error)}`,
      resultFile: contentBase64,
    });
    return false;
  }
}

function failure(code: string, error: string): RunOutcome {
  return {
    status: 'failed',
    exitCode: null,
    durationMs: null,
    stdout: '',
    stderr: '',
    error,
    errorCode: code,
    outputRows: null,
    outputBytes: null,
    resultFile: null,
  };
}

function runnerFailure(error: unknown): RunOutcome {
  if (!(error instanceof RunnerError))
    return failure('INTERNAL', 'the run could not be recorded (internal error)');
  switch (error.kind) {
    case 'aborted':
      return {
        ...failure('OVERRUN', 'the runner did not answer within the timeout plus margin; stopped'),
        status: 'timeout',
      };
    case 'busy':
      return failure('RUNNER_BUSY', `the runner is at its concurrency limit: ${error.message}`);
    case 'unavailable':
      return failure('RUNNER_UNAVAILABLE', `the runner could not be reached: ${error.message}`);
    case 'unauthorized':
      return failure('RUNNER_UNAUTHORIZED', 'the runner refused the key (SCRAPER_API_KEY differs)');
    case 'rejected':
      return failure(error.code ?? 'RUNNER_REJECTED', `the runner refused the run: ${error.message}`);
  }
}

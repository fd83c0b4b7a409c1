import type { Runtime } from '../../domain/scrapers/manifest.ts';

// The runner API as the spec shapes it (Runner API, POST /run, /stop, /status).

export type RunnerRunRequest = {
  runId: string;
  runtime: Runtime;
  entrypoint: string;
  outputFile: string;
  source: { code: Record<string, string> } | { codeUrl: string };
  env: Record<string, string>;
  timeoutSecs: number;
  memoryMb: number;
};

export type RunnerRunResult = {
  status: 'success' | 'failed' | 'timeout';
  exitCode: number;
  durationMs: number;
  stdout: string;
  stderr: string;
  output?: { rows: number; bytes: number; contentBase64: string };
  error?: string;
  code?: string;
  /** The commit a git repository's run ran, when the runner reports one. */
  commit?: string;
};

export interface RunnerClient {
  /** Resolves with the run's result (also for failed and timed-out runs); throws RunnerError otherwise. */
  run(request: RunnerRunRequest, signal?: AbortSignal): Promise<RunnerRunResult>;
  /** Asks the runner to kill the run's container; `not_found` when it is not active there. */
  stop(runId: string): Promise<'stopping' | 'not_found'>;
  status(runId: string): Promise<{ active: boolean; phase?: string }>;
}

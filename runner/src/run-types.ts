// Shapes shared by the run manager and the HTTP layer (the HTTP schemas mirror these).
import type { FileHandle } from 'node:fs/promises';
export type Runtime = 'python' | 'node';
export type RunStatus = 'success' | 'failed' | 'timeout';

export interface RunRequest {
  run_id: string;
  runtime: Runtime;
  entrypoint: string;
  output_file?: string;
  code_url?: string;
  code?: Record<string, string>;
  env?: Record<string, string>;
  limits?: { timeout_secs?: number; memory_mb?: number };
}

export interface RunResult {
  status: RunStatus;
  exit_code: number;
  duration_ms: number;
  stdout: string;
  stderr: string;
  output?: { rows: number; bytes: number; content_base64: string };
  /** Why a run did not succeed, for the run record; absent on success. */
  error?: string;
  code?: string;
  /** The commit a git repository's run ran (`git rev-parse HEAD` of its clone); absent for inline code. */
  commit?: string;
}

export type RunPhase = 'preparing' | 'running' | 'collecting';

/** The validated CSV of a successful run, open: the HTTP layer streams it as output.content_base64. */
export interface RunCsv {
  rows: number;
  bytes: number;
  file: FileHandle;
}

/** What a run hands back: the result, and on success its CSV (whoever receives it closes it). */
export type RunAnswer = RunResult & { csv?: RunCsv };

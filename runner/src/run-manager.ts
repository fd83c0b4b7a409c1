// Owns the runs of this runner process: admission (concurrency limit, unique run ids),
// preparing the code, the container, the output checks, cleanup, and the counters behind
// /health and /metrics. Nothing outlives a run: its workspace and container are removed in
// `finally` whatever happened.
import { randomUUID } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunnerConfig } from './config.ts';
import { RunnerError, badRequest } from './errors.ts';
import { type ResolvedHost, resolvePublicHost } from './code/address-guard.ts';
import { cloneRepository, parseCodeUrl, type CodeUrl } from './code/git.ts';
import { checkCodeMap, checkRelativePath, writeCodeFiles } from './code/inline.ts';
import { checkOutputCsv } from './output.ts';
import { type OutputCaps, describeOutputProblem, outputProblem, watchOutput } from './output-watch.ts';
import { OWNER } from './owner.ts';
import { canMountCapped } from './sandbox/capped-mounts.ts';
import type { RunAnswer, RunPhase, RunRequest, RunResult, RunStatus } from './run-types.ts';
import { type RunningContainer, type StopReason, startContainer } from './sandbox/container.ts';
import { hostHasIpv6 } from './sandbox/podman-args.ts';
import { reclaimContainer } from './sandbox/network-leaks.ts';
import {
  checkEnv,
  createWorkspace,
  makeReadable,
  removeWorkspace,
  type Workspace,
  type WorkspaceCaps,
  writeEnvFile,
} from './workspace.ts';

interface ActiveRun {
  runId: string;
  phase: RunPhase;
  startedAt: Date;
  abort: AbortController;
  container: RunningContainer | undefined;
  stopReason: StopReason | undefined;
  done: Promise<unknown>;
  /** The commit a git run's clone checked out: every result of the run reports it. */
  commit?: string;
}

export interface RunStatusView {
  run_id: string;
  active: boolean;
  phase?: RunPhase;
  started_at?: string;
  elapsed_ms?: number;
  stopping?: boolean;
}

type CodeSource =
  { kind: 'inline'; files: Map<string, string> } | { kind: 'git'; source: CodeUrl; resolved?: ResolvedHost };

const OUTPUT_FILE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,254}$/;
const MB = 1024 * 1024;
/** The scraper's /tmp: 64 MB and this many entries. */
const TMP_BYTES = 64 * MB;
const TMP_INODES = 4096;
/** conmon kills a container this long after its run's timeout if the runner has not (a crash). */
const HARD_TIMEOUT_MARGIN_SECS = 30;

/**
 * The kernel-enforced caps of a run's writable places. /output gets 1 MB and one entry above
 * the runner's caps so that passing a cap is visible to the watcher (which then kills the
 * container) while the kernel stops the flood right there.
 */
export function workspaceCaps(config: RunnerConfig): WorkspaceCaps | undefined {
  if (!canMountCapped()) return undefined;
  return {
    output: { bytes: config.maxOutputSizeMb * MB + MB, inodes: config.maxOutputFiles + 2 },
    tmp: { bytes: TMP_BYTES, inodes: TMP_INODES },
  };
}

/** The parts of a container's spec that follow from the configuration and the workspace. */
export function workspaceSpec(config: RunnerConfig, workspace: Workspace) {
  return {
    codeDir: workspace.codeDir,
    outputDir: workspace.outputDir,
    tmpDir: workspaceCaps(config) ? workspace.tmpDir : undefined,
    envFile: workspace.envFile,
    cidFile: workspace.cidFile,
    owner: OWNER,
    cpus: config.cpus,
    maxOutputBytes: config.maxOutputSizeMb * MB,
    network: config.network,
    dnsServers: config.dnsServers,
    seccompProfile: config.seccompProfile,
    disableIpv6: hostHasIpv6(),
  };
}

export class RunManager {
  readonly config: RunnerConfig;
  /** Labels this process's containers, so shutdown and leak checks can find them. */
  readonly instanceLabel = randomUUID();
  private readonly startedAt = Date.now();
  private readonly active = new Map<string, ActiveRun>();
  private closing = false;
  private counters = { total: 0, success: 0, failed: 0, timeout: 0 };

  constructor(config: RunnerConfig) {
    this.config = config;
  }

  get activeRuns(): number {
    return this.active.size;
  }

  metrics() {
    return {
      active_runs: this.active.size,
      total_runs: this.counters.total,
      total_success: this.counters.success,
      total_failed: this.counters.failed,
      total_timeout: this.counters.timeout,
      uptime_seconds: Math.floor((Date.now() - this.startedAt) / 1000),
      queue_capacity: this.config.maxConcurrent,
    };
  }

  status(runId: string): RunStatusView {
    const run = this.active.get(runId);
    if (!run) return { run_id: runId, active: false };
    return {
      run_id: runId,
      active: true,
      phase: run.phase,
      started_at: run.startedAt.toISOString(),
      elapsed_ms: Date.now() - run.startedAt.getTime(),
      stopping: run.stopReason !== undefined,
    };
  }

  /** Asks an active run to stop; false when no such run is active. */
  stop(runId: string): boolean {
    const run = this.active.get(runId);
    if (!run) return false;
    this.halt(run, 'stopped');
    return true;
  }

  private halt(run: ActiveRun, reason: StopReason): void {
    run.stopReason ??= reason;
    run.abort.abort();
    run.container?.stop(reason);
  }

  /** Stops every run and waits until each has cleaned up after itself. */
  async shutdown(): Promise<void> {
    this.closing = true;
    const runs = [...this.active.values()];
    for (const run of runs) this.halt(run, 'shutdown');
    await Promise.allSettled(runs.map((run) => run.done));
  }

  /** Runs a scraper; on success the answer's `csv` is open and the caller must close it. */
  async execute(request: RunRequest): Promise<RunAnswer> {
    const code = this.checkRequest(request);
    // The SSRF guard answers 400 like any other invalid request, before the run is admitted.
    if (code.kind === 'git')
      code.resolved = await resolvePublicHost(code.source.url.hostname, this.config.allowLoopbackGit);
    // From here to registering the run everything is synchronous, so two requests cannot both
    // take the last free slot.
    if (this.closing) throw new RunnerError(503, 'SHUTTING_DOWN', 'the runner is shutting down');
    if (this.active.has(request.run_id))
      throw badRequest('DUPLICATE_RUN_ID', `run ${request.run_id} is already active`);
    if (this.active.size >= this.config.maxConcurrent) {
      throw new RunnerError(
        429,
        'CONCURRENCY_LIMIT',
        `this runner is at its limit of ${this.config.maxConcurrent} concurrent runs`,
      );
    }
    let release!: () => void;
    const run: ActiveRun = {
      runId: request.run_id,
      phase: 'preparing',
      startedAt: new Date(),
      abort: new AbortController(),
      container: undefined,
      stopReason: undefined,
      done: new Promise<void>((resolve) => (release = resolve)),
    };
    this.active.set(run.runId, run);
    this.counters.total += 1;
    let status: RunStatus = 'failed';
    try {
      const result = await this.perform(run, request, code);
      status = result.status;
      return result;
    } finally {
      this.active.delete(run.runId);
      this.counters[status] += 1;
      release();
    }
  }

  private checkRequest(request: RunRequest): CodeSource {
    checkRelativePath(request.entrypoint, 'entrypoint');
    if (
      request.output_file !== undefined &&
      (!OUTPUT_FILE.test(request.output_file) || request.output_file.includes('..'))
    ) {
      throw badRequest(
        'INVALID_PATH',
        `output_file '${request.output_file}' must be a plain file name (letters, digits, . _ -)`,
      );
    }
    checkEnv(request.env ?? {});
    const hasUrl = request.code_url !== undefined;
    const hasCode = request.code !== undefined;
    if (hasUrl === hasCode) throw badRequest('INVALID_CODE_SOURCE', 'give exactly one of code_url and code');
    if (request.code !== undefined)
      return { kind: 'inline', files: checkCodeMap(request.code, this.config.maxRepoSizeMb * MB) };
    return { kind: 'git', source: parseCodeUrl(request.code_url as string) };
  }

  private async perform(run: ActiveRun, request: RunRequest, code: CodeSource): Promise<RunAnswer> {
    const began = Date.now();
    const finish = (partial: Omit<RunResult, 'duration_ms'>): RunResult => ({
      ...partial,
      duration_ms: Date.now() - began,
      ...(run.commit ? { commit: run.commit } : {}),
    });
    const failure = (error: string, errorCode: string, stdout = '', stderr = '', exitCode = -1) =>
      finish({ status: 'failed', exit_code: exitCode, stdout, stderr, error, code: errorCode });

    let workspace: Workspace | undefined;
    try {
      workspace = await createWorkspace(this.config.dataDir, run.runId, workspaceCaps(this.config));
      try {
        await this.prepareCode(run, code, workspace);
      } catch (err) {
        // A clone that failed, was too large or too slow ends the run, not the request.
        if (err instanceof RunnerError && err.statusCode === 422)
          return failure(err.details ? `${err.message}: ${err.details}` : err.message, err.code);
        throw err;
      }
      if (run.stopReason)
        return failure(
          'run stopped before the scraper started',
          run.stopReason === 'shutdown' ? 'RUNNER_SHUTDOWN' : 'STOPPED',
        );
      try {
        const entry = await lstat(join(workspace.codeDir, request.entrypoint));
        if (!entry.isFile())
          return failure(`entrypoint ${request.entrypoint} is not a file`, 'ENTRYPOINT_NOT_FOUND');
      } catch {
        return failure(`entrypoint ${request.entrypoint} does not exist in the code`, 'ENTRYPOINT_NOT_FOUND');
      }
      return await this.runContainer(run, request, workspace, finish, failure);
    } finally {
      if (workspace) await removeWorkspace(workspace);
    }
  }

  private async prepareCode(run: ActiveRun, code: CodeSource, workspace: Workspace): Promise<void> {
    if (code.kind === 'inline') {
      await writeCodeFiles(workspace.codeDir, code.files);
    } else {
      if (code.resolved === undefined) throw new Error('code_url host was not resolved before admission');
      const commit = await cloneRepository({
        source: code.source,
        resolved: code.resolved,
        dest: workspace.codeDir,
        home: workspace.root,
        maxBytes: this.config.maxRepoSizeMb * MB,
        timeoutMs: this.config.cloneTimeoutSecs * 1000,
        signal: run.abort.signal,
      });
      if (commit) run.commit = commit;
    }
    await makeReadable(workspace.codeDir);
  }

  private async runContainer(
    run: ActiveRun,
    request: RunRequest,
    workspace: Workspace,
    finish: (partial: Omit<RunResult, 'duration_ms'>) => RunResult,
    failure: (error: string, code: string, stdout?: string, stderr?: string, exitCode?: number) => RunResult,
  ): Promise<RunAnswer> {
    const config = this.config;
    const outputFile = request.output_file ?? 'data.csv';
    const maxOutputBytes = config.maxOutputSizeMb * MB;
    const outputCaps: OutputCaps = { maxBytes: maxOutputBytes, maxFiles: config.maxOutputFiles };
    const timeoutSecs = request.limits?.timeout_secs ?? config.defaultTimeoutSecs;
    const memoryMb = request.limits?.memory_mb ?? config.defaultMemoryMb;
    await writeEnvFile(workspace.envFile, {
      ...request.env,
      CHRONOMAP_RUN_ID: run.runId,
      CHRONOMAP_OUTPUT_DIR: '/output',
      CHRONOMAP_OUTPUT_FILE: outputFile,
    });
    const entry = `/scraper/${request.entrypoint}`;
    run.phase = 'running';
    const container = startContainer(
      {
        name: `chronomap-run-${run.runId}`,
        instanceLabel: this.instanceLabel,
        image: request.runtime === 'python' ? config.imagePython : config.imageNode,
        command: request.runtime === 'python' ? ['python3', entry] : ['node', entry],
        ...workspaceSpec(config, workspace),
        hardTimeoutSecs: timeoutSecs + HARD_TIMEOUT_MARGIN_SECS,
        memoryMb,
      },
      {
        podman: config.podmanPath,
        maxLogBytes: config.maxLogBytes,
        createTimeoutMs: config.createTimeoutSecs * 1000,
      },
    );
    run.container = container;
    if (run.stopReason) container.stop(run.stopReason);
    // The scraper's time starts when its container does, not while it waits for its turn to
    // be created (creation is serialised and bounded by its own watchdog).
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    void container.started.then(() => {
      if (!ended) timer = setTimeout(() => this.halt(run, 'timeout'), timeoutSecs * 1000);
    });
    // The output caps are also checked while the scraper runs: past one the container is killed
    // (the tmpfs caps and the fsize ulimit hold the flood meanwhile).
    const watcher = watchOutput(workspace.outputDir, outputCaps, (problem) => this.halt(run, problem));
    let outcome;
    try {
      outcome = await container.result;
    } finally {
      ended = true;
      clearTimeout(timer);
      watcher.stop();
      // The container is gone: if podman's teardown did not release its address and rules, do.
      const containerId = await readFile(workspace.cidFile, 'utf8').catch(() => '');
      await reclaimContainer(config.podmanPath, config.network, containerId.trim());
    }
    run.phase = 'collecting';
    const { stdout, stderr, exitCode } = outcome;
    if (outcome.engineError !== undefined) {
      throw new RunnerError(
        500,
        'SANDBOX_ERROR',
        'the container engine could not start the sandbox',
        outcome.engineError,
      );
    }
    const reason = outcome.stopReason ?? run.stopReason;
    switch (reason) {
      case 'timeout':
        return finish({
          status: 'timeout',
          exit_code: exitCode,
          stdout,
          stderr,
          error: `the scraper ran longer than its ${timeoutSecs} s limit`,
          code: 'TIMEOUT',
        });
      case 'output-too-large':
      case 'too-many-files':
      case 'output-link': {
        const [message, errorCode] = describeOutputProblem(reason, outputCaps);
        return failure(message, errorCode, stdout, stderr, exitCode);
      }
      case 'log-limit':
        return failure(
          `the scraper wrote more than ${config.maxLogBytes / 1024} KB to stdout or stderr: the container was killed and the rest not carried`,
          'LOG_LIMIT',
          stdout,
          stderr,
          exitCode,
        );
      case 'stopped':
        return failure('the run was stopped', 'STOPPED', stdout, stderr, exitCode);
      case 'shutdown':
        return failure('the runner shut down during the run', 'RUNNER_SHUTDOWN', stdout, stderr, exitCode);
      default:
        break;
    }
    if (exitCode !== 0) {
      const killed =
        exitCode === 137 ? ` (killed by SIGKILL: most likely the ${memoryMb} MB memory limit)` : '';
      return failure(
        `the scraper exited with code ${exitCode}${killed}`,
        exitCode === 137 ? 'KILLED' : 'EXIT_CODE',
        stdout,
        stderr,
        exitCode,
      );
    }
    const problem = await outputProblem(workspace.outputDir, outputCaps);
    if (problem !== undefined) {
      const [message, errorCode] = describeOutputProblem(problem, outputCaps);
      return failure(message, errorCode, stdout, stderr, exitCode);
    }
    // The file stays open past the workspace's removal (its tmpfs is then unmounted lazily and
    // freed when the HTTP layer has streamed it and closes it).
    const checked = await checkOutputCsv(workspace.outputDir, outputFile, maxOutputBytes);
    if (!checked.ok) return failure(checked.message, 'INVALID_OUTPUT', stdout, stderr, exitCode);
    const { ok: _ok, ...csv } = checked;
    return { ...finish({ status: 'success', exit_code: 0, stdout, stderr }), csv };
  }
}

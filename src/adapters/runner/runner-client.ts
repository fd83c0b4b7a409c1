import http from 'node:http';
import https from 'node:https';
import {
  type RunnerClient,
  type RunnerRunRequest,
  type RunnerRunResult,
} from '../../ports/scrapers/runner-client.ts';
import { RunnerError } from '../../domain/scrapers/runner-failures.ts';
import { currentRequestId } from '../request-context.ts';

// HTTP client of the runner API (spec: Runner API) with the shared bearer key. node:http rather
// than fetch: a run may take an hour, and fetch gives up waiting for response headers after 300 s.

type Answer = { status: number; body: unknown };

/** The header naming the run of a runner call (lower case, as Node sends it). */
const RUN_ID_HEADER = 'x-chronomap-run-id';

export function httpRunnerClient(baseUrl: string, apiKey: string): RunnerClient {
  // Every call about a run names it in a header as well: a load balancer in front of several runners
  // routes a run's stop and status to the runner that took the run (docs/scaling.md, "Many processes behind a load balancer").
  const call = (method: string, path: string, runId: string, body?: unknown, signal?: AbortSignal) =>
    requestJson(method, `${baseUrl}${path}`, { apiKey, runId }, body, signal);

  return {
    async run(request: RunnerRunRequest, signal?: AbortSignal): Promise<RunnerRunResult> {
      const answer = await call('POST', '/run', request.runId, toWire(request), signal);
      if (answer.status !== 200) throw refusal(answer);
      return fromWire(answer.body);
    },

    async stop(runId) {
      const answer = await call('POST', `/stop/${encodeURIComponent(runId)}`, runId);
      if (answer.status === 200) return 'stopping';
      if (answer.status === 404) return 'not_found';
      throw refusal(answer);
    },

    async status(runId) {
      const answer = await call('GET', `/status/${encodeURIComponent(runId)}`, runId);
      if (answer.status !== 200) throw refusal(answer);
      const body = answer.body as { active?: unknown; phase?: unknown };
      return {
        active: body.active === true,
        ...(typeof body.phase === 'string' ? { phase: body.phase } : {}),
      };
    },
  };
}

function toWire(request: RunnerRunRequest): Record<string, unknown> {
  return {
    run_id: request.runId,
    runtime: request.runtime,
    entrypoint: request.entrypoint,
    output_file: request.outputFile,
    ...('code' in request.source ? { code: request.source.code } : { code_url: request.source.codeUrl }),
    env: request.env,
    limits: { timeout_secs: request.timeoutSecs, memory_mb: request.memoryMb },
  };
}

/** A commit as the runner reports it: 40 (SHA-1) or 64 (SHA-256) hex digits. */
const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function fromWire(body: unknown): RunnerRunResult {
  const b = (body ?? {}) as Record<string, unknown>;
  if (b.status !== 'success' && b.status !== 'failed' && b.status !== 'timeout') {
    throw new RunnerError(
      'rejected',
      'the runner answered 200 without a run status',
      'INVALID_RUNNER_RESPONSE',
    );
  }
  const output = b.output as { rows?: unknown; bytes?: unknown; content_base64?: unknown } | undefined;
  return {
    status: b.status,
    exitCode: typeof b.exit_code === 'number' ? b.exit_code : -1,
    durationMs: typeof b.duration_ms === 'number' ? b.duration_ms : 0,
    stdout: typeof b.stdout === 'string' ? b.stdout : '',
    stderr: typeof b.stderr === 'string' ? b.stderr : '',
    ...(output && typeof output.content_base64 === 'string'
      ? {
          output: {
            rows: Number(output.rows ?? 0),
            bytes: Number(output.bytes ?? 0),
            contentBase64: output.content_base64,
          },
        }
      : {}),
    ...(typeof b.error === 'string' ? { error: b.error } : {}),
    ...(typeof b.code === 'string' ? { code: b.code } : {}),
    ...(typeof b.commit === 'string' && COMMIT.test(b.commit) ? { commit: b.commit } : {}),
  };
}

function refusal(answer: Answer): RunnerError {
  const body = (answer.body ?? {}) as { message?: unknown; code?: unknown };
  const message = typeof body.message === 'string' ? body.message : `runner answered ${answer.status}`;
  const code = typeof body.code === 'string' ? body.code : undefined;
  if (answer.status === 429) return new RunnerError('busy', message, code ?? 'CONCURRENCY_LIMIT');
  if (answer.status === 401) return new RunnerError('unauthorized', message, code);
  if (answer.status === 503) return new RunnerError('unavailable', message, code);
  return new RunnerError('rejected', message, code);
}

function requestJson(
  method: string,
  url: string,
  names: { apiKey: string; runId: string },
  body: unknown,
  signal: AbortSignal | undefined,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string | number> = {
      authorization: `Bearer ${names.apiKey}`,
      accept: 'application/json',
      [RUN_ID_HEADER]: names.runId,
    };
    // The request this call is made for (a cancel, or the trigger that queued the run): the runner
    // logs it as the request's id.
    const requestId = currentRequestId();
    if (requestId) headers['x-request-id'] = requestId;
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = payload.length;
    }
    const transport = target.protocol === 'https:' ? https : http;
    const req = transport.request(target, { method, headers, ...(signal ? { signal } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (error) => reject(asRunnerError(error, signal)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = null;
        try {
          parsed = text === '' ? null : JSON.parse(text);
        } catch {
          parsed = null;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', (error) => reject(asRunnerError(error, signal)));
    if (payload) req.write(payload);
    req.end();
  });
}

function asRunnerError(error: Error, signal: AbortSignal | undefined): RunnerError {
  if (signal?.aborted) return new RunnerError('aborted', 'gave up waiting for the runner');
  const code = (error as { code?: string }).code;
  return new RunnerError('unavailable', code ? `${code}: ${error.message}` : error.message);
}

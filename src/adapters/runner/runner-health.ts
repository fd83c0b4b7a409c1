import type { RunnerCheck } from '../../domain/site/health.ts';
import type { RunnerStatus } from '../../ports/site/system-status.ts';

/** Pings the scraper runner's unauthenticated `/health`; any failure is a degraded runner, never a crash. */
export function httpRunnerStatus(url: string, timeoutMs = 2_000): RunnerStatus {
  return {
    url,
    async check(): Promise<RunnerCheck> {
      try {
        const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(timeoutMs) });
        if (!response.ok) return { status: 'degraded', url, message: `runner answered ${response.status}` };
        const body = (await response.json()) as { status?: unknown; active_runs?: unknown };
        if (body.status !== 'ok')
          return { status: 'degraded', url, message: 'runner reported a status other than ok' };
        return {
          status: 'ok',
          url,
          ...(typeof body.active_runs === 'number' ? { activeRuns: body.active_runs } : {}),
        };
      } catch (error) {
        const reason = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        return { status: 'degraded', url, message: `runner unreachable (${reason})` };
      }
    },
  };
}

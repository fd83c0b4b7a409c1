import { Gauge, Registry } from 'prom-client';
import type { RunManager } from '../run-manager.ts';

// GET /metrics/prometheus: the figures of the spec's JSON GET /metrics in Prometheus text form, read
// from the run manager when scraped (so the two never disagree).

type RunnerFigures = ReturnType<RunManager['metrics']>;

const FIGURES: { field: keyof RunnerFigures; name: string; help: string }[] = [
  { field: 'active_runs', name: 'chronomap_runner_active_runs', help: 'Runs in progress' },
  { field: 'total_runs', name: 'chronomap_runner_runs_total', help: 'Runs started since the runner started' },
  { field: 'total_success', name: 'chronomap_runner_runs_success_total', help: 'Runs that succeeded' },
  { field: 'total_failed', name: 'chronomap_runner_runs_failed_total', help: 'Runs that failed' },
  {
    field: 'total_timeout',
    name: 'chronomap_runner_runs_timeout_total',
    help: 'Runs stopped by their timeout',
  },
  {
    field: 'uptime_seconds',
    name: 'chronomap_runner_uptime_seconds',
    help: 'Seconds since the runner started',
  },
  { field: 'queue_capacity', name: 'chronomap_runner_capacity', help: 'Runs the runner accepts at once' },
];

export function runnerPrometheusRegistry(runs: Pick<RunManager, 'metrics'>): Registry {
  const registry = new Registry();
  for (const { field, name, help } of FIGURES)
    // Gauges (read, not incremented here); the `_total` ones only ever grow.
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(runs.metrics()[field]);
      },
    });
  return registry;
}

import { Gauge, type Registry } from 'prom-client';
import type { ReplicaCheck } from '../../domain/read/replica-choice.ts';

/**
 * `chronomap_replica_lag_seconds{replica}`: how old each read replica's data may be, as the probe
 * last found it (docs/scaling.md, "Read replicas"); no series for a standby that is down (its lag
 * is not known). Every process probes the same standbys: the largest value is the one to keep.
 */
export function watchReplicaLag(registry: Registry, status: () => readonly ReplicaCheck[]): void {
  new Gauge({
    name: 'chronomap_replica_lag_seconds',
    help: 'How old the data of each read replica may be, at most, at the last probe (seconds)',
    labelNames: ['replica'],
    aggregator: 'max',
    registers: [registry],
    collect() {
      this.reset();
      for (const check of status())
        if (check.lagSeconds !== undefined) this.set({ replica: check.name }, check.lagSeconds);
    },
  });
}

import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

// With `--processes N` the API processes are node:cluster workers of one primary, and one scrape
// must see them all: the primary asks each worker for its metrics over the cluster's IPC channel and
// adds them up with its own (prom-client's aggregation: counters and histograms summed, gauges as
// each declares — the queue gauges read from the database take the maximum, not N times the value).

const REQUEST = 'chronomap:metrics';
const REPLY = 'chronomap:metrics:reply';
const WORKER_ANSWER_MS = 2_000;

type Reply = { type: typeof REPLY; id: number; metrics: MetricsJson };

/** In an API worker process: answer the primary's requests with this process's metrics. */
export function answerPrimaryMetricsRequests(registry: Registry): void {
  if (!cluster.isWorker) return;
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type !== REQUEST) return;
    void registry
      .getMetricsAsJSON()
      .then((metrics) => process.send?.({ type: REPLY, id: message.id, metrics }));
  });
}

let nextRequest = 0;

/** The primary's and every live worker's metrics as one Prometheus text (a silent worker is left out). */
export async function clusterMetricsText(own: Registry): Promise<string> {
  const id = (nextRequest += 1);
  const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker?.isConnected());
  const replies = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<MetricsJson | null>((resolve) => {
          const timer = setTimeout(() => finish(null), WORKER_ANSWER_MS);
          const onMessage = (message: Reply) => {
            if (message?.type === REPLY && message.id === id) finish(message.metrics);
          };
          const finish = (metrics: MetricsJson | null) => {
            clearTimeout(timer);
            worker?.off('message', onMessage);
            resolve(metrics);
          };
          worker?.on('message', onMessage);
          worker?.send({ type: REQUEST, id });
        }),
    ),
  );
  const all = [await own.getMetricsAsJSON(), ...replies.filter((reply) => reply !== null)];
  return AggregatorRegistry.aggregate(all).metrics();
}

import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, Histogram, Registry, Summary } from 'prom-client';

// With `--processes N` the API processes are node:cluster workers of one primary, and every scrape,
// whichever way it comes (the primary's METRICS_BIND listener, or GET /api/metrics on whichever
// worker took the connection, which asks the primary), gets the same answer: the primary's own
// metrics plus every worker's, added up as prom-client's cluster aggregation does (counters and
// histograms summed, gauges as each declares: the queue gauges read from the database take the
// maximum, not N times the value).
//
// The sums never go backwards when a worker dies and is replaced (docs/decisions.md, "Metrics of
// several processes"): the primary keeps the last counters and histograms each worker sent (with
// every scrape answer, and every second unasked), and when a worker is gone they stay in the sum
// as a retired share. Only what a killed worker counted in its last second is lost; a worker that
// stops on SIGTERM sends its final figures first. A worker that does not answer a scrape in time
// is counted with its last figures, not left out. The sums restart from zero only when the primary
// restarts, which Prometheus reads as the counter reset it is.

/** One metric as getMetricsAsJSON gives it (prom-client's types say `type` is an enum; it is a string). */
type Sample = { value: number; labels: Record<string, string | number>; metricName?: string };
type MetricJson = { name: string; help: string; type: string; aggregator: string; values: Sample[] };
type MetricsJson = MetricJson[];

const ASK = 'chronomap:metrics';
const ANSWER = 'chronomap:metrics:reply';
const SNAPSHOT = 'chronomap:metrics:counters';
const TEXT_ASK = 'chronomap:metrics:text';
const TEXT_ANSWER = 'chronomap:metrics:text:reply';

type Message =
  | { type: typeof ASK; id: number }
  | { type: typeof ANSWER; id: number; metrics: MetricsJson }
  | { type: typeof SNAPSHOT; metrics: MetricsJson }
  | { type: typeof TEXT_ASK; id: number }
  | { type: typeof TEXT_ANSWER; id: number; text?: string; error?: string };

/** How long a scrape waits for a worker before counting it with its last figures. */
const WORKER_ANSWER_MS = 3_000;
/** How long a worker's /api/metrics waits for the primary. */
const PRIMARY_ANSWER_MS = 8_000;
/** How often a worker sends its counters and histograms unasked. */
const SNAPSHOT_EVERY_MS = 1_000;

async function asJson(registry: Registry): Promise<MetricsJson> {
  return (await registry.getMetricsAsJSON()) as unknown as MetricsJson;
}

/** The counters, histograms and summaries of a registry: what only grows while the process lives. */
async function monotonicJson(registry: Registry): Promise<MetricsJson> {
  const grows = registry
    .getMetricsAsArray()
    .filter(
      (metric) => metric instanceof Counter || metric instanceof Histogram || metric instanceof Summary,
    );
  return (await Promise.all(grows.map((metric) => (metric as Counter).get()))) as unknown as MetricsJson;
}

function monotonicPart(metrics: MetricsJson): MetricsJson {
  return metrics.filter((metric) => ['counter', 'histogram', 'summary'].includes(metric.type));
}

const sampleKey = (sample: Sample) =>
  `${sample.metricName ?? ''}\u0000${JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1)))}`;

/** `a` and `b` added up, series by series (both counters and histograms only). */
function summed(a: MetricsJson, b: MetricsJson): MetricsJson {
  const byName = new Map<string, MetricJson>();
  for (const metric of [...a, ...b]) {
    const into = byName.get(metric.name);
    if (!into) {
      byName.set(metric.name, { ...metric, values: metric.values.map((sample) => ({ ...sample })) });
      continue;
    }
    const series = new Map(into.values.map((sample) => [sampleKey(sample), sample]));
    for (const sample of metric.values) {
      const existing = series.get(sampleKey(sample));
      if (existing) existing.value += sample.value;
      else into.values.push({ ...sample });
    }
  }
  return [...byName.values()];
}

/**
 * In an API worker process: answers the primary's requests with this process's metrics, sends its
 * counters every second unasked, and `flush()` sends them a last time (on shutdown, once no request
 * runs any more). Outside a cluster worker it does nothing.
 */
export function answerPrimaryMetricsRequests(registry: Registry): { flush(): Promise<void> } {
  if (!cluster.isWorker) return { flush: async () => {} };
  const send = (message: Message) =>
    new Promise<void>((resolve) => {
      if (!process.connected || !process.send) return resolve();
      process.send(message, undefined, {}, () => resolve());
    });
  process.on('message', (message: Message) => {
    if (message?.type !== ASK) return;
    void asJson(registry).then((metrics) => send({ type: ANSWER, id: message.id, metrics }));
  });
  const snapshot = async () => send({ type: SNAPSHOT, metrics: await monotonicJson(registry) });
  const timer = setInterval(() => void snapshot(), SNAPSHOT_EVERY_MS);
  timer.unref();
  return {
    async flush() {
      clearInterval(timer);
      await snapshot();
    },
  };
}

/**
 * The Prometheus text a process serves (METRICS_BIND and GET /api/metrics alike): its own registry,
 * or in an API worker of several the primary's sum of all processes.
 */
export function servedMetricsText(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  let next = 0;
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = (next += 1);
      const timer = setTimeout(
        () => finish(new Error('the primary process did not answer')),
        PRIMARY_ANSWER_MS,
      );
      const onMessage = (message: Message) => {
        if (message?.type !== TEXT_ANSWER || message.id !== id) return;
        finish(message.text ?? new Error(message.error ?? 'no metrics'));
      };
      const finish = (result: string | Error) => {
        clearTimeout(timer);
        process.off('message', onMessage);
        if (typeof result === 'string') resolve(result);
        else reject(result);
      };
      process.on('message', onMessage);
      if (!process.connected || !process.send) finish(new Error('no primary process'));
      else process.send({ type: TEXT_ASK, id } satisfies Message);
    });
}

type ClusterMetrics = {
  /** Every process's metrics as one Prometheus text. */
  text(): Promise<string>;
};

/**
 * In the primary of several API processes (call before forking them): collects the workers'
 * metrics and keeps the counts of those gone; answers the workers' GET /api/metrics.
 */
export function clusterMetrics(own: Registry): ClusterMetrics {
  const latest = new Map<number, MetricsJson>();
  const gone = new Set<number>();
  const waiting = new Map<string, (metrics: MetricsJson | null) => void>();
  let retired: MetricsJson = [];
  const primary = new Registry();
  const exits = new Counter({
    name: 'chronomap_api_process_exits_total',
    help: 'API processes that exited and were replaced (crashed, killed or stopped) since the primary started',
    registers: [primary],
  });
  let nextAsk = 0;

  const retire = (worker: Worker) => {
    if (gone.has(worker.id)) return;
    gone.add(worker.id);
    retired = summed(retired, latest.get(worker.id) ?? []);
    latest.delete(worker.id);
    for (const [key, resolve] of waiting) if (key.endsWith(`:${worker.id}`)) resolve(null);
  };

  const ask = (worker: Worker, id: number) =>
    new Promise<MetricsJson | null>((resolve) => {
      const key = `${id}:${worker.id}`;
      const timer = setTimeout(() => done(null), WORKER_ANSWER_MS);
      const done = (metrics: MetricsJson | null) => {
        clearTimeout(timer);
        waiting.delete(key);
        resolve(metrics);
      };
      waiting.set(key, done);
      worker.send({ type: ASK, id } satisfies Message, (error: Error | null) => {
        if (error) done(null);
      });
    });

  const text = async (): Promise<string> => {
    const id = (nextAsk += 1);
    const asked = Object.values(cluster.workers ?? {}).filter(
      (worker): worker is Worker => worker !== undefined && worker.isConnected() && !gone.has(worker.id),
    );
    const [ownMetrics, primaryMetrics, answers] = await Promise.all([
      asJson(own),
      asJson(primary),
      Promise.all(asked.map((worker) => ask(worker, id))),
    ]);
    // From here on synchronous: a worker retired meanwhile is in `retired`, and only there.
    const parts: MetricsJson[] = [ownMetrics, primaryMetrics, retired];
    asked.forEach((worker, index) => {
      if (gone.has(worker.id)) return;
      const answer = answers[index] ?? latest.get(worker.id);
      if (answer) parts.push(answer);
    });
    return AggregatorRegistry.aggregate(parts as never).metrics();
  };

  cluster.on('message', (worker: Worker, message: Message) => {
    if (gone.has(worker.id)) return;
    switch (message?.type) {
      case SNAPSHOT:
        latest.set(worker.id, message.metrics);
        break;
      case ANSWER:
        latest.set(worker.id, monotonicPart(message.metrics));
        waiting.get(`${message.id}:${worker.id}`)?.(message.metrics);
        break;
      case TEXT_ASK: {
        // The asking worker may be gone by the time the sum is ready (a scrape reads the database,
        // a SIGTERMed worker exits meanwhile): with a callback, a send on its closed channel is an
        // error given to it, not an 'error' event that would end the primary. Nobody waits for
        // the answer then.
        const reply = (answer: Message) => {
          if (worker.isConnected()) worker.send(answer, () => {});
        };
        text().then(
          (answer) => reply({ type: TEXT_ANSWER, id: message.id, text: answer }),
          (error: unknown) => reply({ type: TEXT_ANSWER, id: message.id, error: String(error) }),
        );
        break;
      }
    }
  });
  cluster.on('disconnect', retire);
  cluster.on('exit', (worker: Worker) => {
    retire(worker);
    exits.inc();
  });
  return { text };
}

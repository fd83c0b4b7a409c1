import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';
import { runCli, startCli, waitForOutput } from '../../helpers/cli.ts';
import { testDatabase } from '../../helpers/database.ts';
import { stopProcess } from '../../helpers/processes.ts';

// Prometheus metrics (docs/operations.md, "Metrics"): they are served only where the operator
// says, and they move with what the service does.

const TOKEN = 'metrics-token-0123456789';
const USGS = readFileSync(path.join(projectRoot, 'examples', 'usgs-earthquakes.csv'));

/** The value of one sample line, e.g. `name{label="x"}` (0 when absent). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

t.test('GET /api/metrics: only with the token, and the figures move', async (t) => {
  const { app, catalogId } = await ingestApp(t, {}, true, { metricsToken: TOKEN });
  const scrape = async () => {
    const response = await app.inject({
      method: 'GET',
      url: '/api/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    t.equal(response.statusCode, 200);
    return response.body;
  };

  for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }]) {
    const refused = await app.inject({ method: 'GET', url: '/api/metrics', headers });
    t.equal(refused.statusCode, 404, 'without the token it is an unknown route');
    t.equal(refused.json().code, 'ROUTE_NOT_FOUND');
  }

  const before = await scrape();
  const route =
    'chronomap_http_request_duration_seconds_count{method="GET",route="/api/v1/events",status="200"}';
  for (let i = 0; i < 3; i += 1) await app.inject({ method: 'GET', url: '/api/v1/events?limit=5' });
  const response = await upload(app, catalogId, { name: 'usgs-earthquakes.csv', content: USGS });
  t.equal(response.statusCode, 201, response.body);
  const progress = await waitForFile(app, (response.json() as { doc: UploadedDoc }).doc.id);
  t.equal(progress.status, 'completed');
  const after = await scrape();

  t.equal(
    sample(after, route) - sample(before, route),
    3,
    'three /api/v1/events requests counted under their route',
  );
  t.ok(
    sample(after, 'chronomap_answer_cache_hits') + sample(after, 'chronomap_answer_cache_misses') >=
      sample(before, 'chronomap_answer_cache_hits') + sample(before, 'chronomap_answer_cache_misses') + 3,
    'answer-cache lookups counted',
  );
  t.equal(
    sample(after, 'chronomap_ingest_rows_total{stage="create-events"}'),
    1943,
    'the rows the create-events stage wrote',
  );
  t.equal(
    sample(after, 'chronomap_ingest_stage_duration_seconds_count{stage="create-events",status="completed"}'),
    1,
  );
  t.match(after, /^chronomap_db_pool_connections\{pool="read",state="idle"\} \d+$/m, 'pool use per pool');
  t.match(after, /^chronomap_db_pool_waiting_clients\{pool="jobs"\} 0$/m);
  t.match(after, /^# TYPE chronomap_queue_oldest_job_age_seconds gauge$/m, 'queue age read from pg-boss');
  t.match(after, /^chronomap_process_resident_memory_bytes \d+/m, 'process metrics');
});

t.test('METRICS_BIND with two API processes: one scrape adds up both', async (t) => {
  const db = await testDatabase(t);
  const migrate = await runCli(['migrate'], { DATABASE_URL: db.url });
  t.equal(migrate.code, 0, migrate.stderr);
  const child = startCli(['api', '--processes', '2'], {
    DATABASE_URL: db.url,
    PORT: '0',
    METRICS_BIND: '127.0.0.1:0',
    LOG_LEVEL: 'warn',
  });
  t.teardown(() => stopProcess(child));
  const [, metricsUrl, address] = await waitForOutput(
    child,
    /metrics: (http:\/\/[\d.:]+\/metrics)[\s\S]*listening on (http:\/\/[\d.:]+)/,
  );
  for (let i = 0; i < 10; i += 1) await fetch(`${address}/api/health`).then((r) => r.arrayBuffer());
  const text = await (await fetch(metricsUrl as string)).text();
  t.equal(
    sample(
      text,
      'chronomap_http_request_duration_seconds_count{method="GET",route="/api/health",status="200"}',
    ),
    10,
    'the requests of both processes, whichever served them',
  );
  const api = await fetch(`${address}/metrics`);
  t.equal(api.status, 404, 'the metrics listener is not the API');
});

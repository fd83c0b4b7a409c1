import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { projectRoot } from '../../../src/adapters/config/environment.ts';
import { ingestApp, upload, type UploadedDoc, waitForFile } from '../../fixtures/ingest/client.ts';
import { testDatabase } from '../../helpers/database.ts';
import { promtoolCheck } from '../../helpers/prometheus.ts';
import { createMetrics } from '../../../src/adapters/metrics/registry.ts';
import { sql } from '../../../src/adapters/postgres/database.ts';
import { openBoss } from '../scrapers/scraper-fixtures.ts';

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
    sample(after, 'chronomap_answer_cache_hits_total') +
      sample(after, 'chronomap_answer_cache_misses_total') >=
      sample(before, 'chronomap_answer_cache_hits_total') +
        sample(before, 'chronomap_answer_cache_misses_total') +
        3,
    'answer-cache lookups counted',
  );
  t.match(after, /^# TYPE chronomap_answer_cache_hits_total counter$/m, 'typed as the counters they are');
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
  t.match(
    after,
    /^chronomap_queue_jobs\{queue="scraper-repo-sync-job",state="retry"\} 0$/m,
    'a series for every known queue and state, 0 when nothing is there',
  );
  t.match(after, /^chronomap_queue_oldest_job_age_seconds\{queue="scraper-repo-sync-job"\} 0$/m);
  t.match(after, /^chronomap_process_resident_memory_bytes \d+/m, 'process metrics');
  const lint = await promtoolCheck(after);
  t.equal(lint.code, 0, `promtool check metrics: ${lint.output}`);
});

t.test('the queue gauges are read at the scrape, both from the same read', async (t) => {
  const db = await testDatabase(t);
  const boss = await openBoss(t, db);
  const metrics = createMetrics();
  metrics.watchDatabase(db.pool);
  const queue = 'scraper-execution-job'; // no worker takes it in this test
  const jobs = (text: string, state: string) =>
    sample(text, `chronomap_queue_jobs{queue="${queue}",state="${state}"}`);
  const age = (text: string) => sample(text, `chronomap_queue_oldest_job_age_seconds{queue="${queue}"}`);

  const empty = await metrics.registry.metrics();
  t.match(empty, new RegExp(`^chronomap_queue_jobs\\{queue="${queue}",state="created"\\} 0$`, 'm'));
  t.equal(age(empty), 0, 'nothing waits: age 0');

  await boss.send(queue, { runId: 1 }, { startAfter: 3600 });
  const later = await metrics.registry.metrics();
  t.equal(jobs(later, 'created'), 1, 'counted at the first scrape after it was queued, not one later');
  t.equal(age(later), 0, 'a job whose start is an hour ahead does not wait yet');

  await boss.send(queue, { runId: 2 });
  await db.pool.query(
    sql.unsafe`update pgboss.job set start_after = now() - interval '90 seconds' where data->>'runId' = '2'`,
  );
  const due = await metrics.registry.metrics();
  t.equal(jobs(due, 'created'), 2);
  t.ok(age(due) >= 90 && age(due) < 120, `the due job has waited 90 s (${age(due)})`);
  const lint = await promtoolCheck(due);
  t.equal(lint.code, 0, `promtool check metrics: ${lint.output}`);
});

t.test("the count tables' modes are read at the scrape", async (t) => {
  const db = await testDatabase(t);
  const metrics = createMetrics();
  metrics.watchDatabase(db.pool);
  const mode = (text: string, table: string, name: string) =>
    sample(text, `chronomap_count_table_mode{table="${table}",mode="${name}"}`);

  const kept = await metrics.registry.metrics();
  for (const table of ['event_fine_cell_counts', 'event_cell_day_counts']) {
    t.equal(mode(kept, table, 'kept'), 1, `${table}: kept after the migrations`);
    t.equal(mode(kept, table, 'draining'), 0);
    t.equal(mode(kept, table, 'off'), 0);
  }

  await db.pool.query(sql.unsafe`select chronomap_fine_cells_drain()`);
  const draining = await metrics.registry.metrics();
  t.equal(mode(draining, 'event_fine_cell_counts', 'draining'), 1, 'a drain shows at the next scrape');
  t.equal(mode(draining, 'event_fine_cell_counts', 'kept'), 0);
  t.equal(mode(draining, 'event_cell_day_counts', 'kept'), 1, 'the other table as it was');
  const lint = await promtoolCheck(draining);
  t.equal(lint.code, 0, `promtool check metrics: ${lint.output}`);
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { row, sql } from '../../../src/adapters/postgres/database.ts';
import type { DatabasePool } from '../../../src/adapters/postgres/database.ts';
import { authHeaders, countEvents, ingestApp, waitForFile } from '../../fixtures/ingest/client.ts';

// A recurring feed that just runs (issue 28 §2): an unchanged feed, fetched from a real HTTP server
// on loopback, completes run after run with no review; the duplicate review keeps its purpose for a
// schedule's first import into a dataset that holds the rows from another source, and each
// schedule's reviewDuplicates (first-run, always, never) is honoured.

const CSV =
  'id,time,latitude,longitude,title\n' +
  '1,2026-01-01T00:00:00Z,52.5,13.4,a\n2,2026-01-02T00:00:00Z,48.8,2.3,b\n3,2026-01-03T00:00:00Z,41.9,12.5,c\n';

async function feed(t: Test) {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv' }).end(CSV);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/events.csv`;
}

type ScheduleDoc = { id: number; dataset: number | null; reviewDuplicates: string };

async function createSchedule(app: FastifyInstance, payload: Record<string, unknown>): Promise<ScheduleDoc> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/scheduled-ingests',
    payload,
    headers: authHeaders(app),
  });
  if (response.statusCode !== 201) throw new Error(response.body);
  return (response.json() as { doc: ScheduleDoc }).doc;
}

const RunRow = row(
  Type.Object({ status: Type.String(), ingest_file_id: Type.Union([Type.Number(), Type.Null()]) }),
);

/** Runs the schedule now and waits for its import to settle (completed, failed or in review). */
async function runOnce(app: FastifyInstance, pool: DatabasePool, scheduleId: number) {
  const triggered = await app.inject({
    method: 'POST',
    url: `/api/scheduled-ingests/${scheduleId}/trigger`,
    headers: authHeaders(app),
  });
  if (triggered.statusCode !== 202) throw new Error(triggered.body);
  const runId = (triggered.json() as { run: { id: number } }).run.id;
  for (let i = 0; i < 300; i++) {
    const run = await pool.one(
      sql.type(RunRow)`select status, ingest_file_id from scheduled_ingest_runs where id = ${runId}`,
    );
    if (run.status === 'failed') throw new Error(`run ${runId} failed`);
    if (run.status === 'imported' && run.ingest_file_id !== null) {
      return { runId, fileId: run.ingest_file_id, progress: await waitForFile(app, run.ingest_file_id) };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`run ${runId} did not import`);
}

t.test('an unchanged feed run three times: three completed runs, no review, events unchanged', async (t) => {
  const { app, db, catalogId, user } = await ingestApp(t, {
    fetch: { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateAddresses: true },
  });
  const url = await feed(t);
  const schedule = await createSchedule(app, { name: 'Daily feed', url, catalog: catalogId });
  t.equal(schedule.reviewDuplicates, 'first-run', 'the default');
  let datasetId = 0;
  for (const attempt of [1, 2, 3]) {
    const { progress } = await runOnce(app, db.pool, schedule.id);
    t.equal(progress.status, 'completed', `run ${attempt} completed`);
    const job = progress.jobs[0];
    t.equal(job?.stages.find((s) => s.name === 'needs-review')?.status, 'completed', 'nothing to review');
    t.same(job?.duplicates, { internal: 0, external: attempt === 1 ? 0 : 3 });
    datasetId = job?.datasetId ?? 0;
    t.equal(await countEvents(db.pool, datasetId), 3, 'the same three events');
  }
  const reviews = await db.pool.oneFirst(
    sql.type(row(Type.Object({ n: Type.Number() })))`
      select count(*)::int as n from ingest_jobs where review_reasons is not null and jsonb_array_length(review_reasons) > 0`,
  );
  t.equal(reviews, 0, 'no run asked for a review');

  const listed = await app.inject({
    method: 'GET',
    url: `/api/scheduled-ingests/${schedule.id}/runs`,
    headers: authHeaders(app),
  });
  const runs = (listed.json() as { runs: { import: Record<string, unknown> | null }[] }).runs;
  t.match(
    runs.map((run) => run.import),
    [
      { status: 'completed', rowsNew: 0, rowsUpdated: 0, rowsUnchanged: 3, reviewReasons: [] },
      { status: 'completed', rowsNew: 0, rowsUpdated: 0, rowsUnchanged: 3, reviewReasons: [] },
      { status: 'completed', rowsNew: 3, rowsUpdated: 0, rowsUnchanged: 0, reviewReasons: [] },
    ],
    "each run's import outcome, newest first: 0 new, 3 unchanged after the first",
  );
  const page = await app.inject({
    method: 'GET',
    url: '/account/scheduled-imports',
    headers: { authorization: `Bearer ${user.token}` },
  });
  t.equal(page.statusCode, 200);
  t.equal(page.body.match(/0 new, 3 unchanged/g)?.length, 2, 'the page shows the outcome of each run');
  t.match(page.body, /3 new, 0 unchanged/);
  const fileId = runs[0]?.import?.ingestFile as number;
  t.match(page.body, `href="/account/imports#import-${fileId}"`, 'and links to the import');
  const imports = await app.inject({
    method: 'GET',
    url: '/account/imports',
    headers: { authorization: `Bearer ${user.token}` },
  });
  t.match(imports.body, `id="import-${fileId}"`, 'which My imports has');
});

t.test(
  "a schedule's first import into a dataset holding the rows from another source asks for review; later runs do not",
  async (t) => {
    const { app, db, catalogId, user } = await ingestApp(t, {
      fetch: { maxBytes: 1024 * 1024, timeoutMs: 5000, allowPrivateAddresses: true },
    });
    const url = await feed(t);
    const other = await createSchedule(app, { name: 'Other source', url, catalog: catalogId });
    const filled = await runOnce(app, db.pool, other.id);
    t.equal(filled.progress.status, 'completed');
    const dataset = filled.progress.jobs[0]?.datasetId as number;

    const second = await createSchedule(app, { name: 'Second source', url, catalog: catalogId, dataset });
    const first = await runOnce(app, db.pool, second.id);
    t.equal(first.progress.status, 'needs-review', 'its first run stops for a person');
    const job = first.progress.jobs[0];
    t.equal(job?.currentStage, 'needs-review');
    const review = job?.stages.find((s) => s.name === 'needs-review');
    t.equal(review?.state, 'waiting', 'the stage it waits at says waiting');
    t.equal(review?.status, 'in_progress', 'not completed: nobody has reviewed it yet');
    const reasons = await db.pool.oneFirst(
      sql.type(
        row(Type.Object({ r: Type.Any() })),
      )`select review_reasons as r from ingest_jobs where id = ${job?.id as number}`,
    );
    t.same(
      reasons,
      ['duplicate rate 100% over 50%: 3 already in the dataset of 3 rows'],
      'the reason with its numbers',
    );
    const myImports = await app.inject({
      method: 'GET',
      url: '/account/imports',
      headers: { authorization: `Bearer ${user.token}` },
    });
    const card =
      new RegExp(`data-job-actions="${job?.id}"[\\s\\S]*?</form>\\s*</div>`).exec(myImports.body)?.[0] ?? '';
    t.match(
      card,
      /Waiting for review:<\/b>\s*duplicate rate 100% over 50%: 3 already in the dataset of 3 rows/,
      'My imports names the real reason with its numbers',
    );
    t.match(card, /<button[^>]*>Import anyway<\/button>/, 'and its button says what it does');
    t.match(
      myImports.body,
      /data-stage="needs-review">[\s\S]*?data-field="stage-status"\s*>waiting</,
      'its stage table shows needs-review waiting',
    );
    t.notMatch(card, /Approve schema changes|class="drift"/, 'no schema change is offered: nothing drifted');

    const approved = await app.inject({
      method: 'PATCH',
      url: `/api/import-jobs/${job?.id}`,
      payload: { approved: true },
      headers: authHeaders(app),
    });
    t.equal(approved.statusCode, 200, approved.body);
    t.equal((await waitForFile(app, first.fileId, (p) => p.status === 'completed')).status, 'completed');
    const next = await runOnce(app, db.pool, second.id);
    t.equal(next.progress.status, 'completed', 'once an import of it completed, its next run just runs');
    t.equal(await countEvents(db.pool, dataset), 3, 'nothing was stored twice');

    const never = await createSchedule(app, {
      name: 'Trusted source',
      url,
      catalog: catalogId,
      dataset,
      reviewDuplicates: 'never',
    });
    t.equal((await runOnce(app, db.pool, never.id)).progress.status, 'completed', '`never` does not ask');

    const always = await app.inject({
      method: 'PATCH',
      url: `/api/scheduled-ingests/${other.id}`,
      payload: { reviewDuplicates: 'always' },
      headers: authHeaders(app),
    });
    t.match(always.json(), { doc: { reviewDuplicates: 'always' } });
    t.equal(
      (await runOnce(app, db.pool, other.id)).progress.status,
      'needs-review',
      '`always` asks on every run',
    );
    t.equal(await countEvents(db.pool, dataset), 3);

    const runs = (
      await app.inject({
        method: 'GET',
        url: `/api/scheduled-ingests/${other.id}/runs`,
        headers: authHeaders(app),
      })
    ).json() as { runs: { status: string; import: Record<string, unknown> | null }[] };
    t.match(
      runs.runs[0],
      {
        status: 'imported',
        import: {
          status: 'needs-review',
          rowsNew: null,
          reviewReasons: ['duplicate rate 100% over 50%: 3 already in the dataset of 3 rows'],
        },
      },
      'a fetched run whose import waits says so, with the reason',
    );
    const page = await app.inject({
      method: 'GET',
      url: '/account/scheduled-imports',
      headers: { authorization: `Bearer ${user.token}` },
    });
    t.match(
      page.body,
      /needs review<\/span\s*>\s*<span class="muted" data-field="import-reasons">duplicate rate 100% over 50%/,
    );
  },
);

t.test('reviewDuplicates takes only its three values', async (t) => {
  const { app, catalogId } = await ingestApp(t);
  const refused = await app.inject({
    method: 'POST',
    url: '/api/scheduled-ingests',
    payload: {
      name: 'x',
      url: 'https://example.org/a.csv',
      catalog: catalogId,
      reviewDuplicates: 'sometimes',
    },
    headers: authHeaders(app),
  });
  t.equal(refused.statusCode, 400);
  t.match(refused.json(), { error: 'Bad Request', message: /reviewDuplicates/ });
  const created = await createSchedule(app, {
    name: 'y',
    url: 'https://example.org/a.csv',
    catalog: catalogId,
  });
  const patched = await app.inject({
    method: 'PATCH',
    url: `/api/scheduled-ingests/${created.id}`,
    payload: { reviewDuplicates: 'often', name: 'renamed' },
    headers: authHeaders(app),
  });
  t.equal(patched.statusCode, 400);
  const stored = (
    await app.inject({
      method: 'GET',
      url: `/api/scheduled-ingests/${created.id}`,
      headers: authHeaders(app),
    })
  ).json() as { name: string; reviewDuplicates: string };
  t.match(stored, { name: 'y', reviewDuplicates: 'first-run' }, 'a refused edit changes nothing');
});

// More runs than SCRAPER_MAX_CONCURRENT at once: the extras get 429, the others finish.
import t from 'tap';
import { makeHarness } from './support/harness.ts';

const h = makeHarness({ SCRAPER_MAX_CONCURRENT: '2' });
t.teardown(() => h.close());

t.test('extras get 429 CONCURRENCY_LIMIT and the admitted runs succeed', async (t) => {
  const source =
    'import time\nfrom chronomap.scraper import output\ntime.sleep(1.5)\noutput.write_row({"ok": 1})\noutput.save()\n';
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      h.run({ runtime: 'python', entrypoint: 'main.py', code: { 'main.py': source } }),
    ),
  );
  const admitted = results.filter((r) => r.statusCode === 200);
  const refused = results.filter((r) => r.statusCode === 429);
  t.equal(admitted.length, 2);
  t.equal(refused.length, 3);
  for (const r of admitted) t.equal(r.body.status, 'success', r.body.stderr);
  for (const r of refused)
    t.match(r.body, { error: 'Too Many Requests', code: 'CONCURRENCY_LIMIT', message: /limit of 2/ });
  t.match(h.runs.metrics(), { active_runs: 0, total_runs: 2, total_success: 2 });
  const prometheus = (await h.app.inject({ method: 'GET', url: '/metrics/prometheus' })).body;
  t.match(prometheus, /^chronomap_runner_runs_total 2$/m, 'the Prometheus form moved with the runs');
  t.match(prometheus, /^chronomap_runner_runs_success_total 2$/m);
  // Capacity is released: a new run is admitted again.
  const again = await h.run({ runtime: 'python', entrypoint: 'main.py', code: { 'main.py': source } });
  t.equal(again.body.status, 'success');
  t.same(h.workspaces(), []);
  t.same(h.containers(), []);
});

t.test('a run_id that is already active is refused', async (t) => {
  const run_id = crypto.randomUUID();
  const first = h.run({
    run_id,
    runtime: 'python',
    entrypoint: 'main.py',
    code: { 'main.py': 'import time\ntime.sleep(60)\n' },
  });
  while (!h.runs.status(run_id).active) await new Promise((r) => setTimeout(r, 20));
  const second = await h.run({
    run_id,
    runtime: 'python',
    entrypoint: 'main.py',
    code: { 'main.py': 'print(1)' },
  });
  t.equal(second.statusCode, 400);
  t.match(second.body, { code: 'DUPLICATE_RUN_ID' });
  h.runs.stop(run_id);
  t.equal((await first).body.code, 'STOPPED');
});

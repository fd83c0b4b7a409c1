import { readFileSync } from 'node:fs';
import http from 'node:http';
import t from 'tap';
import { runCli, startCli, waitForOutput } from '../../helpers/cli.ts';
import { testDatabase } from '../../helpers/database.ts';
import { stopProcess } from '../../helpers/processes.ts';
import { promtoolCheck, startPrometheus } from '../../helpers/prometheus.ts';

// Metrics as a real Prometheus (Debian's) reads them from several API processes (issue 31 §5): a
// known number of requests spread over three processes is the sum Prometheus reads, the same through
// METRICS_BIND and through GET /api/metrics on whichever process takes the scrape, and a process
// SIGKILLed or stopped with SIGTERM and replaced makes no counter go back (no reset in Prometheus's
// eyes) and loses no count.

const TOKEN = 'metrics-token-0123456789';
const HEALTH = 'chronomap_http_request_duration_seconds_count{route="/api/health"}';

/** GET on a connection of its own, so node:cluster hands each request to the next process. */
function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/** `count` GETs of `url`, each on a connection of its own; their statuses. */
async function send(url: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i += 1) statuses.push(await getOnNewConnection(url));
  return statuses;
}

/** The API worker processes of a primary (its child processes). */
function childPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
}

t.test(
  'Prometheus reads the exact sum of three API processes, across a SIGKILLed and a SIGTERMed one',
  async (t) => {
    const db = await testDatabase(t);
    const migrate = await runCli(['migrate'], { DATABASE_URL: db.url });
    t.equal(migrate.code, 0, migrate.stderr);
    const child = startCli(['api', '--processes', '3'], {
      DATABASE_URL: db.url,
      PORT: '0',
      METRICS_BIND: '127.0.0.1:0',
      METRICS_TOKEN: TOKEN,
      LOG_LEVEL: 'warn',
    });
    t.teardown(() => stopProcess(child));
    const [, bind, address] = await waitForOutput(
      child,
      /metrics: http:\/\/([\d.:]+)\/metrics[\s\S]*listening on (http:\/\/[\d.:]+)/,
    );
    const prometheus = await startPrometheus(t, [
      { name: 'bind', target: bind as string, path: '/metrics' },
      {
        name: 'api',
        target: (address as string).replace('http://', ''),
        path: '/api/metrics',
        bearer: TOKEN,
      },
    ]);

    const sent = 60;
    t.same(await send(`${address}/api/health`, sent), Array(sent).fill(200));
    for (const job of ['bind', 'api'])
      t.equal(
        await prometheus.waitFor(`sum(${HEALTH.replace('{', `{job="${job}",`)})`, (value) => value === sent),
        sent,
        `${job}: Prometheus reads all ${sent} requests, whichever process served them`,
      );

    // One process killed outright: its counts stay in the sum; the replacement counts on top.
    const workers = childPids(child.pid as number);
    t.equal(workers.length, 3, 'three API processes');
    process.kill(workers[0] as number, 'SIGKILL');
    await waitForOutput(child, /API process \d+ listening/, 60_000);
    const scrapesBefore = await prometheus.scrapes('bind');
    const more = 30;
    t.same(await send(`${address}/api/health`, more), Array(more).fill(200));
    for (const job of ['bind', 'api'])
      t.equal(
        await prometheus.waitFor(
          `sum(${HEALTH.replace('{', `{job="${job}",`)})`,
          (value) => value === sent + more,
        ),
        sent + more,
        `${job}: ${sent} + ${more} after the replacement, nothing lost or counted twice`,
      );
    t.ok((await prometheus.scrapes('bind')) > scrapesBefore, 'scraped across the replacement');

    // One stopped as an operator would (SIGTERM) right after its requests: it sends its last counts.
    const last = 30;
    t.same(await send(`${address}/api/health`, last), Array(last).fill(200));
    const [stopped] = childPids(child.pid as number);
    process.kill(stopped as number, 'SIGTERM');
    await waitForOutput(child, /API process \d+ listening/, 60_000);
    const total = sent + more + last;
    for (const job of ['bind', 'api'])
      t.equal(
        await prometheus.waitFor(`sum(${HEALTH.replace('{', `{job="${job}",`)})`, (value) => value === total),
        total,
        `${job}: all ${total} after a SIGTERM too`,
      );
    t.same(
      (await prometheus.query(`resets(chronomap_http_request_duration_seconds_count[10m]) > 0`)).map(
        (entry) => entry.labels,
      ),
      [],
      'no request counter ever went back, in either job',
    );
    t.same(
      (await prometheus.query('chronomap_api_process_exits_total')).map((entry) => entry.value),
      [2, 2],
      'both exits are counted',
    );

    const text = await (
      await fetch(`${address}/api/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    const lint = await promtoolCheck(text);
    t.equal(lint.code, 0, `promtool check metrics on /api/metrics of three processes: ${lint.output}`);
  },
);

// code_url runs against a local HTTPS git host (loopback, allowed by the operator flag).
import { randomBytes } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import t from 'tap';
import { csvRecords, makeHarness } from './support/harness.ts';
import { startGitServer } from './support/git-server.ts';

const server = await startGitServer();
t.teardown(() => server.close());
// The runner's git trusts the test certificate through the variable an operator would set.
process.env.GIT_SSL_CAINFO = server.caFile;

const h = makeHarness({
  SCRAPER_ALLOW_LOOPBACK_GIT: 'true',
  SCRAPER_MAX_REPO_SIZE_MB: '1',
  SCRAPER_MAX_CONCURRENT: '4',
});
t.teardown(() => h.close());

const scraper = (label: string) =>
  `from chronomap.scraper import output\nfrom lib.names import NAME\noutput.write_row({"branch": "${label}", "name": NAME})\noutput.save()\n`;
server.addRepo(
  'small',
  {
    'main.py': scraper('main'),
    'lib/__init__.py': '',
    'lib/names.py': 'NAME = "from a module"\n',
    'assets/blob.bin': randomBytes(200 * 1024),
  },
  { feature: { 'main.py': scraper('feature') } },
);
// Random bytes do not compress: 3 MB of them is over the 1 MB cap however git packs it.
server.addRepo('large', {
  'main.py': scraper('main'),
  'lib/__init__.py': '',
  'lib/names.py': 'NAME = "x"\n',
  'data/a.bin': randomBytes(3 * 1024 * 1024),
});

t.test('a repository under the cap is cloned and run, the default branch', async (t) => {
  const { body } = await h.run({
    runtime: 'python',
    entrypoint: 'main.py',
    code_url: `${server.url}/small.git`,
  });
  t.equal(body.status, 'success', `${body.error} ${body.stderr}`);
  t.same(csvRecords(body)[1], ['main', 'from a module']);
  t.equal(body.commit, server.head('small', 'main'), 'the run reports the commit it ran');
});

t.test('#branch selects the branch', async (t) => {
  const { body } = await h.run({
    runtime: 'python',
    entrypoint: 'main.py',
    code_url: `${server.url}/small.git#feature`,
  });
  t.equal(body.status, 'success', `${body.error} ${body.stderr}`);
  t.same(csvRecords(body)[1], ['feature', 'from a module']);
  t.equal(body.commit, server.head('small', 'feature'), "the branch's commit");
  t.not(body.commit, server.head('small', 'main'));
});

t.test('a repository over SCRAPER_MAX_REPO_SIZE_MB is aborted during the clone', async (t) => {
  const { statusCode, body } = await h.run({
    runtime: 'python',
    entrypoint: 'main.py',
    code_url: `${server.url}/large.git`,
  });
  t.equal(statusCode, 200);
  t.equal(body.status, 'failed');
  t.equal(body.code, 'REPO_TOO_LARGE');
  t.match(body.error, /larger than SCRAPER_MAX_REPO_SIZE_MB \(1 MB\)/);
  t.equal(body.exit_code, -1, 'the scraper never ran');
});

t.test('a missing repository or branch fails the run with CLONE_FAILED', async (t) => {
  const missing = await h.run({
    runtime: 'python',
    entrypoint: 'main.py',
    code_url: `${server.url}/nope.git`,
  });
  t.equal(missing.body.code, 'CLONE_FAILED');
  const branch = await h.run({
    runtime: 'python',
    entrypoint: 'main.py',
    code_url: `${server.url}/small.git#no-such-branch`,
  });
  t.equal(branch.body.code, 'CLONE_FAILED');
});

t.test('a redirect to another host is not followed', async (t) => {
  const { body } = await h.run({
    runtime: 'python',
    entrypoint: 'main.py',
    code_url: `${server.url}/redirect/small.git`,
  });
  t.equal(body.status, 'failed');
  t.equal(body.code, 'CLONE_FAILED');
});

t.test('credentials in code_url never appear in messages', async (t) => {
  const { body } = await h.run({
    runtime: 'python',
    entrypoint: 'main.py',
    code_url: `https://user:s3cret-token@localhost:${new URL(server.url).port}/nope.git`,
  });
  t.equal(body.code, 'CLONE_FAILED');
  t.notMatch(JSON.stringify(body), /s3cret-token/);
});

t.test('a git host that stalls makes the run fail with CLONE_TIMEOUT', async (t) => {
  const slow = makeHarness({ SCRAPER_ALLOW_LOOPBACK_GIT: 'true', SCRAPER_CLONE_TIMEOUT: '2' });
  t.teardown(() => slow.close());
  // Accepts the connection and never says a word, not even the TLS handshake.
  const sockets = new Set<Socket>();
  let accepted = 0;
  const silent = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.resume(); // read, so that the client's going away is seen
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => silent.close());
  // Waits (up to a generous 10 s) for the server side to see every connection closed.
  const settle = async (count: () => number) => {
    for (let i = 0; i < 200 && count() > 0; i++) await new Promise((r) => setTimeout(r, 50));
    return count();
  };

  for (const [what, codeUrl, served, open] of [
    [
      'accepts and never answers',
      `https://localhost:${(silent.address() as { port: number }).port}/r.git`,
      () => accepted,
      () => sockets.size,
    ],
    [
      'answers a byte at a time, forever',
      `${server.url}/trickle/small.git`,
      () => server.trickles().served,
      () => server.trickles().open,
    ],
  ] as const) {
    const { statusCode, body } = await slow.run({
      runtime: 'python',
      entrypoint: 'main.py',
      code_url: codeUrl,
    });
    t.equal(statusCode, 200, what);
    t.equal(body.status, 'failed', what);
    t.equal(body.code, 'CLONE_TIMEOUT', what);
    t.match(body.error, /clone did not finish within 2 s/, what);
    t.equal(body.exit_code, -1, `${what}: the scraper never ran`);
    t.ok(served() > 0, `${what}: git did reach the server`);
    t.same(slow.workspaces(), [], `${what}: the workspace is gone`);
    t.equal(await settle(open), 0, `${what}: git was killed, its connection is closed`);
  }
});

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), []);
  t.same(h.containers(), []);
});

// Real podman: costs a scraper must not be able to push onto the host (issue 34). Its stdout
// and stderr past their cap end the run (LOG_LIMIT) instead of being carried; a socket hidden
// below PATH_MAX in /output fails the run; a container killed for memory leaves no `oom` file
// in the runner's working directory.
import { existsSync } from 'node:fs';
import t from 'tap';
import { makeHarness, py } from './support/harness.ts';

const h = makeHarness({ SCRAPER_MAX_CONCURRENT: '3', SCRAPER_DEFAULT_TIMEOUT: '60' });
t.teardown(() => h.close());

t.test('stdout past its cap ends the run with LOG_LIMIT, the first bytes kept', async (t) => {
  // An endless flood: without the cap at the source it would run until the timeout.
  const { body } = await h.run(py('import sys\nwhile True:\n    sys.stdout.write("x" * 65536)\n'));
  t.equal(body.status, 'failed');
  t.equal(body.code, 'LOG_LIMIT');
  t.match(body.error, /more than 1024 KB/);
  t.ok(body.stdout.length < 1024 * 1024 + 200, `kept ${body.stdout.length} characters`);
  t.match(body.stdout, /^x{1000}/);
  t.match(body.stdout, /more bytes not kept/);
});

t.test('stderr past its cap too; up to the cap is carried whole', async (t) => {
  const [flood, within] = await Promise.all([
    h.run(py('import os\nwhile True:\n    os.write(2, b"e" * 65536)\n')),
    h.run(py('import sys\nsys.stdout.write("y" * (1024 * 1024 - 10))\nsys.exit(3)\n')),
  ]);
  t.equal(flood.body.code, 'LOG_LIMIT');
  t.match(flood.body.stderr, /^e{1000}/);
  t.equal(within.body.code, 'EXIT_CODE');
  t.equal(within.body.exit_code, 3);
  t.equal(within.body.stdout.length, 1024 * 1024 - 10);
});

t.test('a socket 6,000 bytes deep in /output fails the run', async (t) => {
  const { body } = await h.run(
    py(`import os, socket
open("/output/data.csv", "w").write("a\\n1\\n")
os.chdir("/output")
for i in range(30):
    os.mkdir("d" * 200); os.chdir("d" * 200)
socket.socket(socket.AF_UNIX).bind("s")
`),
  );
  t.equal(body.status, 'failed');
  t.equal(body.code, 'OUTPUT_LINK', String(body.error));
});

t.test("a container killed for memory leaves no oom file in the runner's directory", async (t) => {
  const { body } = await h.run({
    ...py('x = bytearray(200 * 1024 * 1024)\n'),
    limits: { memory_mb: 64 },
  });
  t.equal(body.code, 'KILLED', String(body.error));
  t.notOk(existsSync('oom'), `no ${process.cwd()}/oom`);
});

t.test('nothing is left behind', async (t) => {
  t.same(h.workspaces(), []);
  t.same(h.containers(), []);
});

import { execFileSync, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import t from 'tap';
import { testDatabase } from '../../helpers/database.ts';

// The main application's image (scripts/podman/build-service-image, run by `scripts/setup --test`)
// starts against a database given by DATABASE_URL and SESSION_SECRET and answers a healthy
// /api/health, as the non-root user, with production dependencies only; `chronomap backup` works
// in it (the image has PostgreSQL's client programs, not its server).

// CHRONOMAP_IMAGE: an image of another tag (IMAGE=… scripts/podman/build-service-image).
const IMAGE = process.env.CHRONOMAP_IMAGE ?? 'localhost/chronomap:latest';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

const inContainer = (id: string, ...command: string[]) =>
  spawnSync('podman', ['exec', id, ...command], { encoding: 'utf8' });

t.test(
  'the service image starts against DATABASE_URL and is healthy, non-root, without dev dependencies',
  async (t) => {
    // Not skipped without podman: scripts/setup --test installs it and builds the image.
    const found = spawnSync('podman', ['image', 'exists', IMAGE]);
    t.equal(
      found.status,
      0,
      found.error
        ? `podman runs (scripts/setup --test installs it): ${found.error.message}`
        : `${IMAGE} exists (scripts/podman/build-service-image builds it)`,
    );
    if (found.status !== 0) return;
    const db = await testDatabase(t);
    const port = await freePort();
    const id = execFileSync(
      'podman',
      [
        'run',
        '--detach',
        '--rm',
        '--network',
        'host',
        '--env',
        `DATABASE_URL=${db.url}`,
        '--env',
        'SESSION_SECRET=image-test-session-secret-0123456789abcdef',
        '--env',
        `PORT=${port}`,
        '--env',
        'HOST=127.0.0.1',
        '--env',
        'API_PROCESSES=1',
        IMAGE,
      ],
      { encoding: 'utf8' },
    ).trim();
    t.teardown(() => void spawnSync('podman', ['rm', '--force', '--time', '2', id]));

    let health: { status: number; body: Record<string, { status: string }> } | undefined;
    for (let attempt = 0; attempt < 120 && health?.status !== 200; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      health = await fetch(`http://127.0.0.1:${port}/api/health`).then(
        async (response) => ({
          status: response.status,
          body: (await response.json()) as Record<string, { status: string }>,
        }),
        () => undefined,
      );
    }
    t.equal(health?.status, 200, spawnSync('podman', ['logs', id], { encoding: 'utf8' }).stderr);
    t.same(
      Object.fromEntries(Object.entries(health?.body ?? {}).map(([name, check]) => [name, check.status])),
      { database: 'ok', migrations: 'ok', postgis: 'ok', environment: 'ok' },
      'it applied the migrations to the empty database and reports healthy',
    );
    // The scraper helpers the tutorial installs from the service come from the image too.
    const npmHelper = await fetch(`http://127.0.0.1:${port}/scraper-helper.tgz`);
    t.equal(npmHelper.status, 200, 'the Node helper package is served');
    const wheelName = /chronomap_scraper-[^"` ]+\.whl/.exec(
      await (await fetch(`http://127.0.0.1:${port}/scraper-helper-python/any.whl`)).text(),
    )?.[0];
    t.ok(wheelName?.endsWith('.whl'), `the wrong wheel name is answered with the right one (${wheelName})`);
    const wheel = await fetch(`http://127.0.0.1:${port}/scraper-helper-python/${wheelName}`);
    t.equal(wheel.status, 200, 'the Python helper wheel is served');
    t.equal(
      Buffer.from(await wheel.arrayBuffer())
        .subarray(0, 2)
        .toString(),
      'PK',
      'a zip',
    );
    t.equal(inContainer(id, 'id', '-u').stdout.trim(), '10001', 'runs as the unprivileged chronomap user');
    t.not(inContainer(id, 'touch', '/app/src/main-was-changed').status, 0, 'cannot change its own code');
    t.equal(inContainer(id, 'test', '-d', '/app/node_modules/tap').status, 1, 'no dev dependencies');
    t.equal(inContainer(id, 'test', '-d', '/app/node_modules/fastify').status, 0, 'the production ones');

    const backup = inContainer(id, '/app/bin/chronomap', 'backup', '--out', '/var/lib/chronomap/backup-1');
    t.equal(backup.status, 0, `chronomap backup runs in the image: ${backup.stderr}`);
    t.match(backup.stdout, /backup of .* written to \/var\/lib\/chronomap\/backup-1: 0 events/);
    t.equal(
      inContainer(id, 'find', '/var/lib/chronomap/backup-1', '-perm', '/077').stdout,
      '',
      'nothing of it readable by others',
    );
  },
);

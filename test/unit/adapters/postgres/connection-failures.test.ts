import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPool, sql } from 'slonik';
import t from 'tap';
import { classifyDatabaseError } from '../../../../src/adapters/http/database-errors.ts';
import { isDatabaseUnreachable } from '../../../../src/adapters/postgres/connection-failures.ts';
import { createDatabasePool, type DatabasePool } from '../../../../src/adapters/postgres/database.ts';

// Every way the database can be unreachable, as the real driver (pg under Slonik) fails on it, not
// as we imagine its errors: each is "unreachable" for connection-failures.ts, so the HTTP error
// map answers 503 DATABASE_UNAVAILABLE and the read replicas fall back to the primary. No
// PostgreSQL needed: the failures are made with sockets of our own.

/** A TCP server on loopback that does `onConnection` with each client; closed when the test ends. */
async function server(onConnection: (socket: Socket) => void): Promise<{ port: number; server: Server }> {
  const sockets = new Set<Socket>();
  const listening = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    listening.close();
  });
  return { port: (listening.address() as AddressInfo).port, server: listening };
}

async function closedPort(): Promise<number> {
  const { port, server: listening } = await server(() => {});
  await new Promise((resolve) => listening.close(resolve));
  return port;
}

/** The error of one query on a fresh pool for `url` (Slonik's wrapping and all). */
async function failureOf(url: string, connectionTimeout?: number): Promise<unknown> {
  let pool: DatabasePool | undefined;
  try {
    // Slonik connects once when the pool is made: the failure may come from either step.
    pool =
      connectionTimeout === undefined
        ? await createDatabasePool(url, { maximumPoolSize: 1 })
        : await createPool(url, { maximumPoolSize: 1, connectionTimeout });
    await pool.query(sql.unsafe`select 1`);
  } catch (error) {
    return error;
  } finally {
    await pool?.end().catch(() => {});
  }
  throw new Error(`a query on ${url} succeeded`);
}

const cases: Array<[string, () => Promise<string>, number?]> = [
  ['refused: nothing listens on the port', async () => `postgres://u@127.0.0.1:${await closedPort()}/db`],
  ['DNS: the host name does not resolve', async () => 'postgres://u@chronomap-db.invalid:5432/db'],
  [
    'socket gone: the embedded cluster stopped (no socket file)',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'chronomap-nosocket-'));
      t.teardown(() => rmSync(dir, { recursive: true, force: true }));
      return `postgresql://u@${encodeURIComponent(dir)}/db`;
    },
  ],
  [
    'reset: the connection is reset while starting up',
    async () => `postgres://u@127.0.0.1:${(await server((socket) => socket.resetAndDestroy())).port}/db`,
  ],
  [
    'closed: the server hangs up without a word',
    async () => `postgres://u@127.0.0.1:${(await server((socket) => socket.end())).port}/db`,
  ],
  [
    'timed out: the server accepts and never answers',
    async () => `postgres://u@127.0.0.1:${(await server(() => {})).port}/db`,
    300,
  ],
];

for (const [name, url, connectionTimeout] of cases) {
  t.test(name, async (t) => {
    const error = await failureOf(await url(), connectionTimeout);
    t.ok(isDatabaseUnreachable(error), `unreachable: ${describe(error)}`);
    t.match(classifyDatabaseError(error), { status: 503, body: { code: 'DATABASE_UNAVAILABLE' } });
  });
}

t.test('what is not an outage stays itself', async (t) => {
  const missingFile = Object.assign(new Error('ENOENT: no such file or directory, open /x'), {
    code: 'ENOENT',
    syscall: 'open',
  });
  t.notOk(isDatabaseUnreachable(missingFile), 'a missing file elsewhere is no database outage');
  t.notOk(isDatabaseUnreachable(new Error('boom')));
  t.notOk(isDatabaseUnreachable(Object.assign(new Error('syntax'), { code: '42601' })));
});

function describe(error: unknown): string {
  const parts: string[] = [];
  for (let current = error; current instanceof Error && parts.length < 4; current = current.cause)
    parts.push(`${current.name} ${(current as { code?: string }).code ?? ''} ${current.message}`);
  return parts.join(' <- ');
}

t.test("Slonik's connection errors count by their class (their name is plain 'Error')", async (t) => {
  const { BackendTerminatedError, ConnectionError } = await import('slonik');
  const connection = new ConnectionError('the pool could not connect');
  t.equal(connection.name, 'Error', 'the name says nothing');
  t.ok(isDatabaseUnreachable(connection));
  t.ok(isDatabaseUnreachable(new Error('wrapped', { cause: new BackendTerminatedError(new Error('x')) })));
  t.notOk(isDatabaseUnreachable(new Error('syntax error at or near "selec"')));
});

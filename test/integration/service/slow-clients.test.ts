import { type AddressInfo, connect } from 'node:net';
import t from 'tap';
import { DEFAULT_BUDGETS } from '../../../src/adapters/config/budget-config.ts';
import { testApp } from '../../helpers/app.ts';

// A client sending its body or its headers a byte at a time is cut once its request outlives the
// configured budget (short here), instead of holding a connection open for ever.

type Outcome = { bytesSent: number; answer: string };

/** Sends `head`, then one byte of `trickle` every `everyMs` until the server closes the socket. */
function trickle(port: number, head: string, body: string, everyMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let sent = 0;
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('error', () => {});
    socket.write(head);
    const timer = setInterval(() => {
      if (sent >= body.length || socket.destroyed) return;
      socket.write(body[sent] ?? '');
      sent += 1;
    }, everyMs);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ bytesSent: sent, answer });
    });
  });
}

t.test('slow clients are cut within the configured time', async (t) => {
  const { app } = await testApp(t, {
    config: {
      budgets: {
        ...DEFAULT_BUDGETS,
        requestTimeoutMs: 1_500,
        headersTimeoutMs: 1_000,
        connectionTimeoutMs: 1_000,
      },
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;

  t.test('a body trickling a byte every 200 ms', async (t) => {
    const body = JSON.stringify({ email: 'slow@example.org', password: 'x'.repeat(100) });
    const outcome = await trickle(
      port,
      `POST /api/users/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
      200,
    );
    t.ok(outcome.bytesSent < body.length, `cut after ${outcome.bytesSent} of ${body.length} bytes`);
    t.match(outcome.answer, /^HTTP\/1\.1 408/, 'answered 408 Request Timeout');
  });

  t.test('headers trickling a byte every 100 ms', async (t) => {
    const headers = `X-Slow: ${'y'.repeat(200)}\r\n\r\n`;
    const outcome = await trickle(port, 'GET /api/health HTTP/1.1\r\nHost: x\r\n', headers, 100);
    t.ok(outcome.bytesSent < headers.length, `cut after ${outcome.bytesSent} of ${headers.length} bytes`);
    t.match(outcome.answer, /^HTTP\/1\.1 408/);
  });

  t.test('an idle keep-alive connection is closed after CONNECTION_TIMEOUT_MS, as documented', async (t) => {
    // Node closes idle keep-alive sockets by keepAliveTimeout, which Fastify defaulted to 72 s.
    t.equal(app.server.keepAliveTimeout, 1_000, 'the configured budget, not the 72 s default');
    const outcome = await new Promise<{ answers: number }>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let answers = 0;
      socket.on('data', (chunk) => (answers += (chunk.toString().match(/^HTTP\/1\.1 200/gm) ?? []).length));
      socket.on('error', () => {});
      socket.write('GET /api/live HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n');
      socket.on('close', () => resolve({ answers }));
    });
    t.equal(outcome.answers, 1, 'answered, then the idle connection was closed by the server');
  });

  t.test('the shipped budget is the documented 30 s', async (t) => {
    t.equal(DEFAULT_BUDGETS.connectionTimeoutMs, 30_000);
  });
});

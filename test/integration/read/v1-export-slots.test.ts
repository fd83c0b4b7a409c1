import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { insertLargeEvents } from '../../helpers/v1-fixture.ts';
import { policyFile, unlimitedAnonymousReads } from '../../helpers/accounts.ts';
import { testApp } from '../../helpers/app.ts';

// Issue 30 §3: a client runs at most two exports at a time; a third is the spec's 429 until one of
// them ends. The two are held open by a client that stops reading (30 MB do not fit in the socket
// buffers), so the test depends on no timing.

type Held = { status: number; request: http.ClientRequest; response: http.IncomingMessage };

function startExport(port: number, path: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path }, (response) => {
      // Not read: the export waits for the client (backpressure) and keeps its place.
      response.pause();
      resolve({ status: response.statusCode ?? 0, request, response });
    });
    request.on('error', reject);
  });
}

function fetchWhole(
  port: number,
  path: string,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body, headers: response.headers }),
        );
      })
      .on('error', reject);
  });
}

t.test('a third concurrent export of one client is refused with the 429 body', async (t) => {
  const { app, db } = await testApp(t, { config: { quotasFile: policyFile(t, unlimitedAnonymousReads) } });
  await insertLargeEvents(db.pool, 30, 1024 * 1024);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as AddressInfo;

  const first = await startExport(port, '/api/v1/events.geojson');
  const second = await startExport(port, '/api/v1/events.csv');
  t.equal(first.status, 200);
  t.equal(second.status, 200);
  const refused = await fetchWhole(port, '/api/v1/events.geojson');
  t.equal(refused.status, 429, refused.body);
  t.match(JSON.parse(refused.body), {
    success: false,
    error: 'Rate limit exceeded',
    code: 'TOO_MANY_EXPORTS',
    limitType: 'burst',
    message: /at most 2 per client/,
  });
  t.equal(refused.headers['retry-after'], '5');
  // Other reads are not held back by the exports.
  t.equal((await fetchWhole(port, '/api/v1/events?limit=1')).status, 200);

  // One export ends (its client leaves): a new one may start.
  first.request.destroy();
  let again = await fetchWhole(port, '/api/v1/events.csv');
  for (let i = 0; i < 100 && again.status === 429; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    again = await fetchWhole(port, '/api/v1/events.csv');
  }
  t.equal(again.status, 200, 'a place freed when the first export ended');
  second.request.destroy();
});

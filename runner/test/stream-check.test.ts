// The stream check (src/sandbox/stream-check) on loopback, without podman: real TCP servers
// stand in for the internet, and the client sends a registry's name split across TCP
// segments, TLS records, header lines and DNS messages. The same check behind the firewall's
// TPROXY rules is tested with real containers in stream-check-sandbox.test.ts.
import net from 'node:net';
import tls from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { readClientHello } from '../src/sandbox/stream-check/tls-hello.ts';
import { createStreamCheck, type Destination } from '../src/sandbox/stream-check/proxy.ts';

const DOMAINS = ['pypi.org', 'npmjs.org', 'pythonhosted.org'];

/** A stand-in server: answers "seen" with everything it has received so far. */
async function standIn(): Promise<{ port: number; received: Buffer[]; close(): void }> {
  const received: Buffer[] = [];
  const server = net.createServer((c) => {
    c.on('data', (d: Buffer) => {
      received.push(d);
      c.write('seen');
    });
    c.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, received, close: () => server.close() };
}

/** A proxy that believes every client meant `port` on the internet, and connects to the stand-in. */
async function proxyFor(
  kind: number,
  target: number,
): Promise<{ port: number; refusals: string[]; close(): void }> {
  const refusals: string[] = [];
  const server = createStreamCheck({
    domains: DOMAINS,
    destinationOf: async (): Promise<Destination> => ({ address: '127.0.0.1', port: kind }),
    sources: ['127.0.0.0/8'],
    connectVia: () => ({ address: '127.0.0.1', port: target }),
    allowLoopback: true,
    headTimeoutMs: 5000,
    onRefuse: (_d, reason) => refusals.push(reason),
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as net.AddressInfo).port, refusals, close: () => server.close() };
}

/** The ClientHello Node's TLS client sends for `servername`. */
async function clientHello(servername: string): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  const got = new Promise<Buffer>((resolve) =>
    server.once('connection', (c) => {
      const parts: Buffer[] = [];
      c.on('data', (d: Buffer) => {
        parts.push(d);
        if (readClientHello(Buffer.concat(parts)).state === 'done') {
          resolve(Buffer.concat(parts));
          c.destroy();
        }
      });
    }),
  );
  const client = tls.connect({ host: '127.0.0.1', port, servername });
  client.on('error', () => {});
  const hello = await got;
  client.destroy();
  server.close();
  return hello;
}

/** The same ClientHello as two TLS records, the handshake message cut at `cut`. */
function twoRecords(hello: Buffer, cut: number): Buffer {
  const body = hello.subarray(5);
  const record = (part: Buffer) =>
    Buffer.concat([Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part]);
  return Buffer.concat([record(body.subarray(0, cut)), record(body.subarray(cut))]);
}

/** Sends `parts` as separate TCP segments; resolves with what came back, or "reset"/"closed". */
async function send(port: number, parts: Buffer[]): Promise<string> {
  const socket = net.connect({ host: '127.0.0.1', port, noDelay: true });
  let answer = '';
  const ended = new Promise<string>((resolve) => {
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
      if (answer.includes('seen')) resolve('seen');
    });
    socket.on('error', () => resolve('reset'));
    socket.on('close', () => resolve(answer || 'closed'));
  });
  for (const part of parts) {
    if (socket.destroyed) break;
    socket.write(part);
    await sleep(50);
  }
  const result = await ended;
  socket.destroy();
  return result;
}

const site = await standIn();
t.teardown(() => site.close());

t.test(
  'TLS: a blocked SNI is refused however the ClientHello is split; another name goes through',
  async (t) => {
    const proxy = await proxyFor(443, site.port);
    t.teardown(() => proxy.close());
    const pypi = await clientHello('pypi.org');
    const cut = pypi.indexOf('pypi.org') + 2;
    t.equal(await send(proxy.port, [pypi]), 'reset', 'whole');
    t.equal(await send(proxy.port, [pypi.subarray(0, cut), pypi.subarray(cut)]), 'reset', 'two TCP segments');
    const records = twoRecords(pypi, cut - 5);
    t.equal(await send(proxy.port, [records]), 'reset', 'two TLS records in one segment');
    t.equal(
      await send(proxy.port, [records.subarray(0, 7), records.subarray(7, cut), records.subarray(cut)]),
      'reset',
      'two records, three segments',
    );
    const files = await clientHello('FILES.pythonhosted.org');
    t.equal(
      await send(proxy.port, [files.subarray(0, 60), files.subarray(60)]),
      'reset',
      'a subdomain, any case',
    );
    const other = await clientHello('example.org');
    const before = site.received.length;
    t.equal(
      await send(proxy.port, [other.subarray(0, 50), other.subarray(50)]),
      'seen',
      'example.org passes',
    );
    t.ok(site.received.length > before, 'and reaches the server');
    t.equal(
      await send(proxy.port, [Buffer.from('GET / HTTP/1.1\r\n\r\n')]),
      'reset',
      'not TLS on 443: refused',
    );
    t.equal(proxy.refusals.filter((r) => r.includes('pypi')).length, 4);
  },
);

t.test(
  'HTTP: a blocked Host is refused however the head is split; the request gets Connection: close',
  async (t) => {
    const proxy = await proxyFor(80, site.port);
    t.teardown(() => proxy.close());
    const split = ['GET /simple/six/ HTTP/1.1\r\nHo', 'st: py', 'pi.org\r\n', '\r\n'].map((s) =>
      Buffer.from(s),
    );
    t.equal(await send(proxy.port, split), 'reset', 'Host split over four segments');
    t.equal(
      await send(proxy.port, [
        Buffer.from('GET http://pypi.org/simple/ HTTP/1.1\r\nHost: example.org\r\n\r\n'),
      ]),
      'reset',
      'absolute-form target',
    );
    t.equal(
      await send(proxy.port, [
        Buffer.from('GET / HTTP/1.1\r\nHost: example.org\r\nHost: pypi.org:80\r\n\r\n'),
      ]),
      'reset',
      'a second Host',
    );
    const before = site.received.length;
    t.equal(
      await send(proxy.port, [
        Buffer.from('GET / HTTP/1.1\r\nHost: exam'),
        Buffer.from('ple.org\r\nConnection: keep-alive\r\n\r\n'),
      ]),
      'seen',
    );
    const got = Buffer.concat(site.received.slice(before)).toString('latin1');
    t.match(got, /\r\nConnection: close\r\n\r\n$/, 'rewritten to one exchange');
    t.notMatch(got, /keep-alive/);
  },
);

/** A DNS query message for `name` with its 2-byte TCP length prefix. */
function dnsQuery(name: string): Buffer {
  const labels = name.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
  const message = Buffer.concat([
    Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
    ...labels,
    Buffer.from([0, 0, 1, 0, 1]),
  ]);
  return Buffer.concat([Buffer.from([message.length >> 8, message.length & 0xff]), message]);
}

t.test('DNS over TCP: every query is read, split or pipelined', async (t) => {
  const proxy = await proxyFor(53, site.port);
  t.teardown(() => proxy.close());
  const pypi = dnsQuery('pypi.org');
  t.equal(
    await send(proxy.port, [pypi.subarray(0, 16), pypi.subarray(16)]),
    'reset',
    'a query split inside the name',
  );
  const ok = dnsQuery('example.org');
  t.equal(await send(proxy.port, [ok]), 'seen', 'another name passes');
  t.equal(
    await send(proxy.port, [Buffer.concat([ok, dnsQuery('registry.npmjs.org')])]),
    'reset',
    'a second query on the same connection',
  );
});

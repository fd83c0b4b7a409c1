import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { guardedUrlFetcher, isForbiddenAddress } from '../../../../src/adapters/fetch/guarded-url-fetcher.ts';
import { localFileStore } from '../../../../src/adapters/files/local-file-store.ts';

t.test(
  'private, loopback, link-local and reserved addresses are forbidden; public ones are not',
  async (t) => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      // IPv6 forms that carry a forbidden IPv4 address (issue 30 §7).
      '::127.0.0.1', // IPv4-compatible
      '::ffff:7f00:1', // IPv4-mapped, in hex
      '::ffff:0:7f00:1', // IPv4-translated
      '2002:7f00:1::1', // 6to4 of 127.0.0.1
      '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
      '2001:0:7f00:1::1', // Teredo whose server is 127.0.0.1
      '2001:0:4136:e378:8000:63bf:f5ff:fffe', // Teredo whose client is 10.0.0.1 (inverted)
      '64:ff9b::7f00:1', // NAT64
      '64:ff9b::808:808', // NAT64 (the well-known prefix is refused whole)
      '64:ff9b:1::a00:1', // local-use NAT64
      '2001:db8::1', // documentation
      'not an ip',
    ]) {
      t.equal(isForbiddenAddress(address), true, address);
    }
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '2002:808:808::1', // 6to4 of a public address
    ]) {
      t.equal(isForbiddenAddress(address), false, address);
    }
  },
);

t.test(
  'the fetcher refuses loopback by literal and by name unless allowed, and enforces the size limit',
  async (t) => {
    const server = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/csv' }).end('time,title\n2026-01-01,a\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const root = mkdtempSync(path.join(os.tmpdir(), 'chronomap-fetch-'));
    const files = localFileStore(root);
    const strict = guardedUrlFetcher({ maxBytes: 1024, timeoutMs: 5000, allowPrivateAddresses: false });
    await t.rejects(strict.fetch(`http://127.0.0.1:${port}/data.csv`), { code: 'SSRF_BLOCKED' });
    await t.rejects(strict.fetch(`http://localhost:${port}/data.csv`), { code: 'SSRF_BLOCKED' });
    await t.rejects(strict.fetch(`http://[::1]:${port}/data.csv`), { code: 'SSRF_BLOCKED' });

    const open = guardedUrlFetcher({ maxBytes: 1024, timeoutMs: 5000, allowPrivateAddresses: true });
    const fetched = await open.fetch(`http://127.0.0.1:${port}/data.csv`);
    t.match(fetched, { contentType: 'text/csv', fileName: 'data.csv' });
    const stored = await files.writeNew('scheduled', '.csv', fetched.body);
    t.equal(stored.bytes, 24);
    t.equal(readFileSync(path.join(root, stored.storedPath), 'utf8'), 'time,title\n2026-01-01,a\n');
    const small = guardedUrlFetcher({ maxBytes: 10, timeoutMs: 5000, allowPrivateAddresses: true });
    const tooLarge = await small.fetch(`http://127.0.0.1:${port}/data.csv`);
    await t.rejects(files.writeNew('scheduled', '.csv', tooLarge.body), { code: 'FILE_TOO_LARGE' });
  },
);

t.test('a body that passes the limit while it streams leaves no file behind', async (t) => {
  // No content-length: the limit is found while the chunks arrive.
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/csv' });
    response.write('time,title\n');
    response.end('2026-01-01,a\n'.repeat(100));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const root = mkdtempSync(path.join(os.tmpdir(), 'chronomap-fetch-'));
  const fetcher = guardedUrlFetcher({ maxBytes: 100, timeoutMs: 5000, allowPrivateAddresses: true });
  const fetched = await fetcher.fetch(`http://127.0.0.1:${port}/data.csv`);
  await t.rejects(localFileStore(root).writeNew('scheduled', '.csv', fetched.body), {
    code: 'FILE_TOO_LARGE',
  });
  t.same(readdirSync(path.join(root, 'scheduled')), [], 'the partial file is removed');
});

import type { IncomingMessage } from 'node:http';
import t from 'tap';
import { redactedUrl, requestIdFor } from '../../../../src/adapters/http/request-logging.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const withHeader = (value?: string) =>
  ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as unknown as IncomingMessage;

t.test('a request id: the caller’s when it is a safe token, else a new UUID', async (t) => {
  t.equal(requestIdFor(withHeader('edge-7f3a:42')), 'edge-7f3a:42', "the proxy's id is kept");
  const fresh = requestIdFor(withHeader());
  t.match(fresh, UUID, 'none given: a UUID');
  t.not(requestIdFor(withHeader()), fresh, 'a new one each time');
  for (const hostile of ['', 'a b', 'x'.repeat(129), 'id\nforged log line', '<script>', 'ä'])
    t.match(requestIdFor(withHeader(hostile)), UUID, `replaced: ${JSON.stringify(hostile.slice(0, 20))}`);
});

t.test('a logged URL has its secrets redacted', async (t) => {
  const token = 'a'.repeat(64);
  t.equal(redactedUrl(`/api/webhooks/trigger/${token}`), '/api/webhooks/trigger/[redacted]');
  t.equal(redactedUrl(`/api/webhooks/trigger/${token}?x=1`), '/api/webhooks/trigger/[redacted]?x=1');
  t.equal(
    redactedUrl('/api/v1/events?limit=5&api_key=s3cret&access%5Ftoken=t0k&page=2'),
    '/api/v1/events?limit=5&api_key=[redacted]&access%5Ftoken=[redacted]&page=2',
    'query values of secret-looking names, also percent-encoded',
  );
  t.equal(redactedUrl('/api/v1/events?bounds=%7B%7D&limit=5'), '/api/v1/events?bounds=%7B%7D&limit=5');
  t.equal(
    redactedUrl('/api/v1/events?%E0%A4%A=1&password'),
    '/api/v1/events?%E0%A4%A=1&password',
    'malformed',
  );
});

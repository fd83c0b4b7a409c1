import type { FastifyReply } from 'fastify';
import t from 'tap';
import {
  domainErrorStatus,
  pageErrorStatus,
  toErrorResponse,
} from '../../../../src/adapters/http/error-handling.ts';
import { RateLimitedError, rateRefusal } from '../../../../src/domain/accounts/rate-limits.ts';
import { DomainError, type DomainErrorKind } from '../../../../src/domain/errors.ts';

// One map from a domain error to its status: the API's JSON errors and the HTML pages read the same
// one, so a page can no longer answer 400 where the API answers 404.

// The spec's status table (§Status codes), read by status: the oracle, written apart from the map.
const EXPECTED: [number, DomainErrorKind[]][] = [
  [400, ['validation']],
  [401, ['unauthorized']],
  [403, ['forbidden', 'quota_exceeded']],
  [404, ['not_found']],
  [409, ['conflict']],
  [429, ['rate_limited']],
  [503, ['unavailable']],
];

function fakeReply() {
  const headers: Record<string, string> = {};
  const reply = {
    header(name: string, value: string) {
      headers[name] = value;
      return reply;
    },
  };
  return { reply: reply as unknown as FastifyReply, headers };
}

t.test('each kind has the spec status, the same for the API and for pages', async (t) => {
  for (const [status, kinds] of EXPECTED)
    for (const kind of kinds) {
      const error = new DomainError(kind, `a ${kind} refusal`);
      t.equal(domainErrorStatus(error), status, kind);
      t.equal(toErrorResponse(error).status, status, `${kind}: the API's error body`);
      t.equal(pageErrorStatus(error, fakeReply().reply), status, `${kind}: a page`);
    }
});

t.test('pages: a framework 4xx keeps its status, anything else is 500', async (t) => {
  const tooLarge = Object.assign(new Error('too large'), { statusCode: 413 });
  t.equal(pageErrorStatus(tooLarge, fakeReply().reply), 413);
  t.equal(pageErrorStatus(new Error('boom'), fakeReply().reply), 500);
  const upstream = Object.assign(new Error('bad gateway'), { statusCode: 502 });
  t.equal(pageErrorStatus(upstream, fakeReply().reply), 500, 'nothing of a 5xx passes through');
});

t.test(
  'pages: a multipart body cut short is 400 as in the API, not 500 (found by the page fuzzer)',
  async (t) => {
    for (const words of ['Unexpected end of form', 'Part terminated early', 'Malformed part header']) {
      t.equal(toErrorResponse(new Error(words)).status, 400, `API: ${words}`);
      t.equal(pageErrorStatus(new Error(words), fakeReply().reply), 400, `page: ${words}`);
    }
  },
);

t.test('pages: a rate-limit refusal gets the 429 headers of the API', async (t) => {
  const now = new Date('2026-01-01T12:00:00Z');
  const reset = new Date('2026-01-01T12:01:00Z');
  const { reply, headers } = fakeReply();
  t.equal(pageErrorStatus(new RateLimitedError(rateRefusal('burst', 5, reset, now)), reply), 429);
  t.same(headers, {
    'X-RateLimit-Limit': '5',
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': '2026-01-01T12:01:00.000Z',
    RateLimit: '"burst";r=0;t=60',
    'Retry-After': '60',
  });
});

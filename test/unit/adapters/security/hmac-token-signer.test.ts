import t from 'tap';
import { hmacTokenSigner } from '../../../../src/adapters/security/hmac-token-signer.ts';

const signer = hmacTokenSigner('a-secret-that-is-at-least-32-characters');
const now = new Date('2030-01-01T00:00:00Z');
const claims = {
  sub: 7,
  sid: '4b0c2a2e-8f9e-4c59-9d8e-0a6b3c1f2d3e',
  iat: 1_893_456_000,
  exp: 1_893_459_600,
};

t.test('a token verifies until it expires', async (t) => {
  const token = signer.sign(claims);
  t.match(token, /^eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9\.[\w-]+\.[\w-]+$/, 'a JWT with HS256');
  t.same(signer.verify(token, now), { ok: true, claims });
  t.same(signer.verify(token, new Date(claims.exp * 1000)), { ok: false, reason: 'expired' });
});

t.test('anything tampered with is invalid', async (t) => {
  const token = signer.sign(claims);
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const changed = Buffer.from(JSON.stringify({ ...claims, sub: 1 })).toString('base64url');
  const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
  for (const forged of [
    `${header}.${changed}.${signature}`,
    `${none}.${payload}.`,
    `${header}.${payload}.${signature.slice(0, -2)}`,
    hmacTokenSigner('another-secret-that-is-32-characters!!').sign(claims),
    `${header}.${Buffer.from('not json').toString('base64url')}.${signature}`,
    '',
    'a.b',
  ]) {
    t.same(signer.verify(forged, now), { ok: false, reason: 'invalid' }, forged.slice(0, 40));
  }
});

t.test('a signed token whose session id is not a UUID is invalid', async (t) => {
  for (const sid of ['1', "x' or 1=1", '4b0c2a2e-8f9e-4c59-9d8e-0a6b3c1f2d3']) {
    t.same(signer.verify(signer.sign({ ...claims, sid }), now), { ok: false, reason: 'invalid' }, sid);
  }
  t.same(signer.verify(signer.sign({ ...claims, sub: 2 ** 60 }), now), { ok: false, reason: 'invalid' });
});

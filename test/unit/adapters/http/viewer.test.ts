import type { FastifyRequest } from 'fastify';
import t from 'tap';
import { viewerOf } from '../../../../src/adapters/http/viewer.ts';

// The one reading of "who is calling" that every route and page uses (the scraper routes' default
// `authenticate` among them): the accounts hooks' request.viewer, and nothing else on the request.

t.test('viewerOf reads request.viewer, and nothing else', async (t) => {
  const request = (viewer: unknown) =>
    ({
      viewer,
      user: { id: 9, role: 'admin', trustLevel: 5 },
      headers: { authorization: 'Bearer x' },
    }) as unknown as FastifyRequest;
  const admin = { id: 3, role: 'admin', trustLevel: 1, email: 'a@b.c' };
  t.equal(viewerOf(request(admin)), admin);
  t.same(viewerOf(request({ id: 4, role: 'user', trustLevel: 4, email: 'd@e.f' })), {
    id: 4,
    role: 'user',
    trustLevel: 4,
    email: 'd@e.f',
  });
  t.equal(viewerOf(request(null)), null, 'a bearer header or request.user alone authenticates nobody');
  t.equal(viewerOf(request(undefined)), null, 'an app without the accounts hooks: anonymous, not undefined');
});

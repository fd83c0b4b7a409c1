import t from 'tap';
import {
  canReadCatalog,
  canReadDataset,
  canWriteCatalog,
  checkStandingChange,
  datasetVisibility,
  type Viewer,
} from '../../../src/domain/access.ts';

const alice: Viewer = { id: 1, email: 'a@example.org', role: 'user', trustLevel: 1 };
const bob: Viewer = { id: 2, email: 'b@example.org', role: 'user', trustLevel: 3 };
const admin: Viewer = { id: 3, email: 'c@example.org', role: 'admin', trustLevel: 1 };

t.test('the hierarchy rule', async (t) => {
  const privateCatalog = { isPublic: false, createdBy: 1 };
  const publicCatalog = { isPublic: true, createdBy: 1 };
  const open = { isPublic: true, createdBy: 1 };
  const restricted = { isPublic: false, createdBy: 1 };
  t.notOk(canReadCatalog(null, privateCatalog));
  t.ok(canReadCatalog(null, publicCatalog));
  t.ok(canReadCatalog(alice, privateCatalog), 'owners see their own');
  t.notOk(canReadCatalog(bob, privateCatalog));
  t.ok(canReadCatalog(admin, privateCatalog), 'admins see all');
  t.notOk(canReadDataset(null, privateCatalog, open), 'a public dataset in a private catalog stays hidden');
  t.notOk(canReadDataset(bob, publicCatalog, restricted), 'a dataset may restrict further');
  t.ok(canReadDataset(null, publicCatalog, open));
  t.ok(canReadDataset(alice, privateCatalog, restricted));
  t.ok(canReadDataset(admin, privateCatalog, restricted));
  t.notOk(canWriteCatalog(bob, publicCatalog), 'seeing is not changing');
  t.same(datasetVisibility(admin), { kind: 'all' });
  t.same(datasetVisibility(null), { kind: 'public-or-owned', ownerId: null });
});

t.test('nobody raises their own standing', async (t) => {
  const self = { id: 2, role: 'user' as const, trustLevel: 3 as const };
  t.throws(() => checkStandingChange(bob, self, { trustLevel: 4 }), { code: 'STANDING_CHANGE_FORBIDDEN' });
  t.throws(() => checkStandingChange(bob, self, { role: 'admin' }), { name: 'ForbiddenError' });
  t.throws(() => checkStandingChange(null, self, { trustLevel: 4 }), { name: 'UnauthorizedError' });
  t.doesNotThrow(() => checkStandingChange(bob, self, { trustLevel: 3 }), 'no change, no question');
  t.doesNotThrow(() => checkStandingChange(admin, self, { trustLevel: 5, role: 'admin' }));
  t.throws(() => checkStandingChange(admin, { id: 3, role: 'admin', trustLevel: 1 }, { role: 'user' }));
});

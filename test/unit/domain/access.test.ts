import t from 'tap';
import {
  canAccessImport,
  canManageSchedule,
  canManageScraperRepo,
  canReadCatalog,
  canReadDataset,
  canWriteCatalog,
  checkStandingChange,
  datasetVisibility,
  hasScraperAccess,
  importVisibility,
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
  t.same(datasetVisibility(null), { kind: 'public-or-owned', ownerId: null, ownedCatalogs: null });
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

t.test('imports: the uploader, the target catalog owner and admins; nobody else', async (t) => {
  const carol: Viewer = { id: 4, email: 'd@example.org', role: 'user', trustLevel: 5 };
  const aliceCatalog = { isPublic: true, createdBy: 1 };
  const upload = { uploadedBy: 2, catalog: aliceCatalog };
  t.ok(canAccessImport(bob, upload), 'the uploader');
  t.ok(canAccessImport(alice, upload), 'the owner of the catalog it writes into');
  t.ok(canAccessImport(admin, upload), 'admins');
  t.notOk(canAccessImport(carol, upload), 'a public catalog does not make its imports public');
  t.notOk(canAccessImport(null, upload), 'anonymous callers');
  t.notOk(canAccessImport(alice, { uploadedBy: null, catalog: null }), 'an import without owner or catalog');
  t.ok(canAccessImport(admin, { uploadedBy: null, catalog: null }));
  t.same(importVisibility(admin!), { kind: 'all' });
  t.same(importVisibility(bob!), { kind: 'uploaded-or-catalog-owned', userId: 2, catalogIds: null });
  t.same(
    importVisibility({ ...bob!, key: { id: 1, scope: 'read', catalogIds: [5] } }),
    { kind: 'uploaded-or-catalog-owned', userId: 2, catalogIds: [5] },
    'a key limited to catalogs lists only their imports',
  );
});

t.test('scheduled imports: the creator, the catalog owner and admins', async (t) => {
  const schedule = { createdBy: 2, catalog: { isPublic: false, createdBy: 1 } };
  t.ok(canManageSchedule(bob, schedule));
  t.ok(canManageSchedule(alice, schedule));
  t.ok(canManageSchedule(admin, schedule));
  t.notOk(canManageSchedule({ id: 9, email: 'e@example.org', role: 'user', trustLevel: 5 }, schedule));
  t.notOk(canManageSchedule(null, schedule));
});

t.test('scraper repos, scrapers and runs: the owner with scraper access, and admins', async (t) => {
  const user = (trustLevel: number, role: 'admin' | 'user' = 'user') => ({ id: 7, role, trustLevel });
  for (const level of [0, 1, 2]) t.notOk(hasScraperAccess(user(level)), `level ${level} has none`);
  for (const level of [3, 4, 5]) t.ok(hasScraperAccess(user(level)), `level ${level} has it`);
  t.ok(hasScraperAccess(user(0, 'admin')));
  t.notOk(hasScraperAccess(null));
  t.ok(canManageScraperRepo(user(3), { createdBy: 7 }));
  t.notOk(canManageScraperRepo(user(3), { createdBy: 8 }), 'a stranger');
  t.notOk(canManageScraperRepo(user(2), { createdBy: 7 }), 'an owner who lost scraper access');
  t.notOk(canManageScraperRepo(user(3), { createdBy: null }), 'a repo without owner');
  t.ok(canManageScraperRepo(user(0, 'admin'), { createdBy: 8 }));
  t.notOk(canManageScraperRepo(null, { createdBy: 7 }));
});

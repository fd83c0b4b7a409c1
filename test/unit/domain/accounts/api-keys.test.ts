import t from 'tap';
import {
  canReadCatalog,
  canWriteCatalog,
  datasetVisibility,
  keyMayCall,
  type Viewer,
} from '../../../../src/domain/access.ts';
import {
  checkNewApiKey,
  keyRouteClass,
  parseApiKeySecret,
} from '../../../../src/domain/accounts/api-keys.ts';

// The key's part of the one access rule (issue 38 §3), without a database.

const owner = (key?: NonNullable<Viewer>['key']): Viewer => ({
  id: 7,
  email: 'o@example.org',
  role: 'user',
  trustLevel: 3,
  ...(key ? { key } : {}),
});
const a = { id: 1, isPublic: false, createdBy: 7 };
const b = { id: 2, isPublic: false, createdBy: 7 };

t.test('a key acts as its owner within its scope and catalogs', async (t) => {
  const readAll = owner({ id: 1, scope: 'read', catalogIds: null });
  const writeA = owner({ id: 2, scope: 'write', catalogIds: [1] });
  t.ok(canReadCatalog(readAll, b), 'an all-catalogs key reads every catalog of the owner');
  t.notOk(canWriteCatalog(readAll, b), 'a read key never writes');
  t.ok(canWriteCatalog(writeA, a), 'a write key writes its catalog');
  t.notOk(canReadCatalog(writeA, b), 'not a private catalog it does not cover');
  t.ok(canReadCatalog(writeA, { ...b, isPublic: true }), 'public ones stay readable');
  t.same(datasetVisibility(writeA), { kind: 'public-or-owned', ownerId: 7, ownedCatalogs: [1] });
  const adminKey: Viewer = {
    id: 9,
    email: 'a@example.org',
    role: 'admin',
    trustLevel: 1,
    key: { id: 3, scope: 'write', catalogIds: null },
  };
  t.notOk(canReadCatalog(adminKey, a), "an admin's key has no admin powers");
});

t.test('keys never reach account management, and read keys never write', async (t) => {
  const read = { id: 1, scope: 'read' as const, catalogIds: null };
  t.equal(keyRouteClass('POST', '/api/api-keys'), 'account');
  t.equal(keyRouteClass('GET', '/api/users/me'), 'account');
  t.equal(keyRouteClass('GET', '/account/api-keys?x=1'), 'account');
  t.equal(keyRouteClass('GET', '/api/v1/events'), 'read');
  t.equal(keyRouteClass('PATCH', '/api/catalogs/1'), 'write');
  t.equal(keyMayCall(read, 'account')?.code, 'API_KEY_NOT_ALLOWED');
  t.equal(keyMayCall(read, 'write')?.code, 'API_KEY_READ_ONLY');
  t.equal(keyMayCall(read, 'read'), null);
  t.equal(keyMayCall({ ...read, scope: 'write' }, 'write'), null);
});

t.test('secrets and settings', async (t) => {
  t.same(parseApiKeySecret(`cmk_12_${'a'.repeat(43)}`), { id: 12, random: 'a'.repeat(43) });
  t.equal(parseApiKeySecret(`cmk_0_${'a'.repeat(43)}`), null);
  t.equal(parseApiKeySecret(`cmk_12_${'a'.repeat(42)}`), null);
  t.equal(parseApiKeySecret('eyJhbGciOi.x.y'), null);
  t.same(checkNewApiKey({ name: ' ci ', scope: 'read', catalogs: [3, 1, 3] }), {
    name: 'ci',
    scope: 'read',
    catalogIds: [1, 3],
  });
  t.throws(() => checkNewApiKey({ name: '', scope: 'read' }));
  t.throws(() => checkNewApiKey({ name: 'x', scope: 'admin' }));
  t.throws(() => checkNewApiKey({ name: 'x', scope: 'read', catalogs: [] }));
});

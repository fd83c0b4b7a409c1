import t from 'tap';
import { findDocument, findDocuments } from '../../../../src/application/collections/collection-documents.ts';
import { collectionUseCaseDeps, ownedHierarchy } from './collection-use-case-fakes.ts';

// Listing and reading documents on the shared in-memory fakes: only what the viewer may see, the
// query's where and sort, Payload's paging, and a 404 (never a 403) for what is hidden.

t.test('a list shows what the viewer may see, with the paging fields', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, catalogs } = await ownedHierarchy(deps);
  const anonymous = await findDocuments(deps, 'catalogs', null, {});
  t.same(
    anonymous.docs.map((doc) => doc.id),
    [catalogs.open],
  );
  t.match(anonymous, {
    totalDocs: 1,
    limit: 10,
    page: 1,
    totalPages: 1,
    hasNextPage: false,
    pagingCounter: 1,
  });
  const own = await findDocuments(deps, 'catalogs', owner, { sort: 'slug', limit: 1, page: 2 });
  t.same(
    own.docs.map((doc) => doc.slug),
    ['open'],
  );
  t.match(own, {
    totalDocs: 2,
    limit: 1,
    page: 2,
    totalPages: 2,
    hasPrevPage: true,
    prevPage: 1,
    nextPage: null,
  });
});

t.test("the query's where filters by whitelisted fields; anything else is refused", async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, sets } = await ownedHierarchy(deps);
  const found = await findDocuments(deps, 'datasets', owner, { 'where[slug][contains]': 'CLOSED' });
  t.same(
    found.docs.map((doc) => doc.id),
    [sets.closed],
  );
  await t.rejects(findDocuments(deps, 'datasets', owner, { 'where[schemaSettings][equals]': 'x' }), {
    name: 'ValidationError',
    code: 'INVALID_WHERE',
  });
  await t.rejects(findDocuments(deps, 'datasets', owner, { sort: 'passwordHash' }), { code: 'INVALID_SORT' });
});

t.test('users are for logged-in callers: each sees their own row, an admin everyone', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, admin } = await ownedHierarchy(deps);
  await t.rejects(findDocuments(deps, 'users', null, {}), { name: 'UnauthorizedError' });
  await t.rejects(findDocument(deps, 'users', null, owner.id), { name: 'UnauthorizedError' });
  t.same(
    (await findDocuments(deps, 'users', owner, {})).docs.map((doc) => doc.email),
    ['owner@example.org'],
  );
  t.equal((await findDocuments(deps, 'users', admin, {})).totalDocs, 3);
  t.notOk('passwordHash' in (await findDocument(deps, 'users', admin, owner.id)));
});

t.test('a document the viewer may not see does not exist for them', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, stranger, catalogs } = await ownedHierarchy(deps);
  const missing = { name: 'NotFoundError', code: 'DOCUMENT_NOT_FOUND' };
  await t.rejects(findDocument(deps, 'catalogs', stranger, catalogs.closed), missing);
  await t.rejects(findDocument(deps, 'catalogs', null, catalogs.closed), missing);
  await t.rejects(findDocument(deps, 'users', stranger, owner.id), missing);
  t.match(await findDocument(deps, 'catalogs', owner, catalogs.closed), { slug: 'closed', isPublic: false });
});

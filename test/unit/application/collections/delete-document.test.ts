import t from 'tap';
import { deleteDocument } from '../../../../src/application/collections/collection-documents.ts';
import { collectionUseCaseDeps, ownedHierarchy } from './collection-use-case-fakes.ts';

// Deleting documents on the shared in-memory fakes: what may be deleted by whom, what goes with it,
// and what the events quota does (nothing: it counts a lifetime).

t.test('the owner deletes a catalog and what is in it; a stranger cannot', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, stranger, catalogs, sets } = await ownedHierarchy(deps);
  await t.rejects(deleteDocument(deps, 'catalogs', stranger, catalogs.open), { name: 'ForbiddenError' });
  await t.rejects(deleteDocument(deps, 'catalogs', stranger, catalogs.closed), {
    code: 'DOCUMENT_NOT_FOUND',
  });
  await t.rejects(deleteDocument(deps, 'catalogs', null, catalogs.open), { name: 'UnauthorizedError' });
  t.match(
    await deleteDocument(deps, 'catalogs', owner, catalogs.open),
    { id: catalogs.open, slug: 'open' },
    'the document as it was',
  );
  t.equal(await deps.repository.hierarchy('catalogs', catalogs.open), null);
  t.equal(await deps.repository.hierarchy('datasets', sets.open), null, 'its datasets went with it');
});

t.test('a deleted event is not given back to the events quota', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, catalogs, sets } = await ownedHierarchy(deps);
  await deps.quotas.take(owner.id, [{ quota: 'totalEvents', amount: 1 }]);
  const id = await deps.repository.insert('events', {
    dataset: sets.closed,
    catalog: catalogs.closed,
    uniqueId: 'e1',
    eventTimestamp: '2024-05-01T10:00:00Z',
  });
  await deleteDocument(deps, 'events', owner, id);
  t.equal(await deps.eventsCounted(owner.id), 1);
});

t.test("users are deleted by admins, never their own account, and the user's sessions end", async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, stranger, admin, catalogs } = await ownedHierarchy(deps);
  const session = await deps.session(owner.id);
  await t.rejects(deleteDocument(deps, 'users', stranger, owner.id), { code: 'DOCUMENT_NOT_FOUND' });
  await t.rejects(deleteDocument(deps, 'users', owner, owner.id), { name: 'ForbiddenError' });
  await t.rejects(deleteDocument(deps, 'users', admin, admin.id), { code: 'USE_ACCOUNT_ROUTES' });
  t.match(await deleteDocument(deps, 'users', admin, owner.id), { id: owner.id, email: 'owner@example.org' });
  t.equal(await deps.sessions.findUser(session), null);
  t.match(
    await deps.repository.findById('catalogs', admin, catalogs.open),
    { createdBy: null },
    'the catalog stays, ownerless',
  );
});

import t from 'tap';
import { updateDocument } from '../../../../src/application/collections/collection-documents.ts';
import { collectionUseCaseDeps, ownedHierarchy } from './collection-use-case-fakes.ts';

// Changing documents on the shared in-memory fakes: who may change what, parents that stay, and the
// user changes that end the user's sessions (a new password, address or role, a lowered level).

t.test(
  'the owner and admins change a catalog; others get 403, or 404 for what they cannot see',
  async (t) => {
    const deps = collectionUseCaseDeps();
    const { owner, stranger, admin, catalogs } = await ownedHierarchy(deps);
    t.match(await updateDocument(deps, 'catalogs', owner, catalogs.open, { title: 'Renamed' }), {
      title: 'Renamed',
    });
    t.match(await updateDocument(deps, 'catalogs', admin, catalogs.open, { isPublic: false }), {
      isPublic: false,
    });
    await t.rejects(updateDocument(deps, 'catalogs', stranger, catalogs.closed, { title: 'x' }), {
      code: 'DOCUMENT_NOT_FOUND',
    });
    await updateDocument(deps, 'catalogs', owner, catalogs.open, { isPublic: true });
    await t.rejects(updateDocument(deps, 'catalogs', stranger, catalogs.open, { title: 'x' }), {
      name: 'ForbiddenError',
    });
    await t.rejects(updateDocument(deps, 'catalogs', owner, catalogs.open, { createdBy: stranger.id }), {
      code: 'OWNER_CHANGE_FORBIDDEN',
    });
    await t.rejects(updateDocument(deps, 'catalogs', null, catalogs.open, { title: 'x' }), {
      name: 'UnauthorizedError',
    });
  },
);

t.test('a dataset keeps its catalog and takes its date fields in one form', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, catalogs, sets } = await ownedHierarchy(deps);
  t.match(await updateDocument(deps, 'datasets', owner, sets.open, { dateFields: ['data.ended'] }), {
    dateFields: ['ended'],
  });
  await t.rejects(updateDocument(deps, 'datasets', owner, sets.open, { catalog: catalogs.closed }), {
    name: 'ValidationError',
    field: 'catalog',
  });
});

t.test('an event keeps its dataset, and its data stays within the size limit', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, sets } = await ownedHierarchy(deps);
  const id = await deps.repository.insert('events', {
    dataset: sets.open,
    catalog: (await deps.repository.hierarchy('datasets', sets.open))?.catalogId,
    uniqueId: 'e1',
    eventTimestamp: '2024-05-01T10:00:00Z',
  });
  t.match(await updateDocument(deps, 'events', owner, id, { title: 'Titled', data: { n: 1 } }), {
    title: 'Titled',
  });
  await t.rejects(updateDocument(deps, 'events', owner, id, { dataset: sets.closed }), {
    name: 'ValidationError',
    field: 'dataset',
  });
  await t.rejects(updateDocument(deps, 'events', owner, id, { data: { text: 'x'.repeat(300_000) } }), {
    code: 'EVENT_DATA_TOO_LARGE',
  });
});

t.test(
  "a user's standing is an admin's to change; a lower one ends their sessions, a higher keeps them",
  async (t) => {
    const deps = collectionUseCaseDeps();
    const { owner, admin } = await ownedHierarchy(deps);
    const session = await deps.session(owner.id);
    await t.rejects(updateDocument(deps, 'users', owner, owner.id, { trustLevel: 5 }), {
      code: 'STANDING_CHANGE_FORBIDDEN',
    });
    await t.rejects(updateDocument(deps, 'users', admin, admin.id, { role: 'user' }), {
      code: 'STANDING_CHANGE_FORBIDDEN',
    });
    await t.rejects(updateDocument(deps, 'users', admin, owner.id, { trustLevel: 9 }), {
      code: 'INVALID_TRUST_LEVEL',
    });
    t.match(await updateDocument(deps, 'users', admin, owner.id, { trustLevel: '3' }), { trustLevel: 3 });
    t.ok(await deps.sessions.findUser(session), 'a raised level keeps the sessions');
    t.match(await updateDocument(deps, 'users', admin, owner.id, { trustLevel: 2 }), { trustLevel: 2 });
    t.equal(await deps.sessions.findUser(session), null, 'a lowered one ends them');
  },
);

t.test(
  "an admin's new password or address for a user ends the user's sessions; users use the account routes",
  async (t) => {
    const deps = collectionUseCaseDeps();
    const { owner, admin } = await ownedHierarchy(deps);
    await t.rejects(updateDocument(deps, 'users', owner, owner.id, { email: 'me@example.org' }), {
      code: 'USE_ACCOUNT_ROUTES',
    });
    const first = await deps.session(owner.id);
    await updateDocument(deps, 'users', admin, owner.id, { password: 'a reset password here' });
    t.equal(await deps.sessions.findUser(first), null);
    const stored = await deps.repository.findById('users', admin, owner.id);
    t.match(stored, { email: 'owner@example.org' });
    const second = await deps.session(owner.id);
    await updateDocument(deps, 'users', admin, owner.id, { email: 'owner@example.org' });
    t.ok(await deps.sessions.findUser(second), 'the same address is no change');
    t.match(await updateDocument(deps, 'users', admin, owner.id, { email: ' Moved@example.org ' }), {
      email: 'Moved@example.org',
    });
    t.equal(await deps.sessions.findUser(second), null);
    await t.rejects(updateDocument(deps, 'users', admin, owner.id, { password: 'short' }), {
      name: 'ValidationError',
      field: 'password',
    });
  },
);

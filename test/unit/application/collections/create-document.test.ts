import t from 'tap';
import { createDocument } from '../../../../src/application/collections/collection-documents.ts';
import { collectionUseCaseDeps, ownedHierarchy } from './collection-use-case-fakes.ts';

// Creating documents on the shared in-memory fakes: a login first, the owner set by the caller (an
// admin may name another), a parent the caller may write into, the events quota taken for each
// event and given back for one never stored, and users made by admins only.

const EVENT = { uniqueId: 'e1', eventTimestamp: '2024-05-01T10:00:00Z', data: { magnitude: 3 } };

t.test('a catalog is the caller’s; only an admin may name another owner', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, stranger, admin } = await ownedHierarchy(deps);
  await t.rejects(createDocument(deps, 'catalogs', null, { slug: 'x', title: 'X' }), {
    name: 'UnauthorizedError',
  });
  t.match(await createDocument(deps, 'catalogs', owner, { slug: 'mine', title: 'Mine' }), {
    slug: 'mine',
    createdBy: owner.id,
    isPublic: false,
  });
  await t.rejects(
    createDocument(deps, 'catalogs', owner, { slug: 'theirs', title: 'T', createdBy: stranger.id }),
    {
      name: 'ForbiddenError',
      code: 'OWNER_CHANGE_FORBIDDEN',
    },
  );
  t.match(
    await createDocument(deps, 'catalogs', admin, { slug: 'given', title: 'G', createdBy: stranger.id }),
    {
      createdBy: stranger.id,
    },
  );
  await t.rejects(createDocument(deps, 'catalogs', owner, { slug: 'mine', title: 'Again' }), {
    kind: 'conflict',
    code: 'DUPLICATE',
  });
});

t.test('a dataset goes into a catalog the caller may write into', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, stranger, catalogs } = await ownedHierarchy(deps);
  const input = { slug: 'new-set', title: 'New', dateFields: ['data.observed', 'ended', 'observed'] };
  t.match(await createDocument(deps, 'datasets', owner, { ...input, catalog: catalogs.closed }), {
    catalog: catalogs.closed,
    createdBy: owner.id,
    dateFields: ['observed', 'ended'],
  });
  const reference = { name: 'ValidationError', field: 'catalog', code: 'INVALID_REFERENCE' };
  await t.rejects(
    createDocument(deps, 'datasets', stranger, { ...input, catalog: catalogs.closed }),
    reference,
    'hidden',
  );
  await t.rejects(
    createDocument(deps, 'datasets', stranger, { ...input, catalog: 2_000_000 }),
    reference,
    'missing',
  );
  await t.rejects(createDocument(deps, 'datasets', stranger, { slug: 's', title: 'S' }), {
    name: 'ValidationError',
    field: 'catalog',
  });
  await t.rejects(
    createDocument(deps, 'datasets', stranger, { ...input, slug: 'x', catalog: catalogs.open }),
    {
      name: 'ForbiddenError',
    },
    'public, but not theirs to add to',
  );
  await t.rejects(
    createDocument(deps, 'datasets', owner, { ...input, catalog: catalogs.open, dateFields: 'x' }),
    {
      name: 'ValidationError',
      field: 'dateFields',
    },
  );
});

t.test('an event counts against the events quota, and one not stored gives it back', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, catalogs, sets } = await ownedHierarchy(deps);
  const event = await createDocument(deps, 'events', owner, { ...EVENT, dataset: sets.closed });
  t.match(event, { dataset: sets.closed, catalog: catalogs.closed, uniqueId: 'e1', data: { magnitude: 3 } });
  t.equal(await deps.eventsCounted(owner.id), 1);
  await t.rejects(createDocument(deps, 'events', owner, { ...EVENT, dataset: sets.closed }), {
    code: 'DUPLICATE',
  });
  t.equal(await deps.eventsCounted(owner.id), 1, 'the duplicate was given back');
  await t.rejects(
    createDocument(deps, 'events', owner, {
      ...EVENT,
      uniqueId: 'big',
      dataset: sets.closed,
      data: { text: 'x'.repeat(300_000) },
    }),
    { name: 'ValidationError', field: 'data', code: 'EVENT_DATA_TOO_LARGE' },
  );
  t.equal(await deps.eventsCounted(owner.id), 1, 'nothing taken for data refused first');
});

t.test('an event past the quota is refused before it is stored', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, sets } = await ownedHierarchy(deps);
  const limit = deps.policy.quotas.totalEvents.limits[1] ?? 0;
  await deps.quotas.take(owner.id, [{ quota: 'totalEvents', amount: limit }]);
  await t.rejects(createDocument(deps, 'events', owner, { ...EVENT, dataset: sets.open }), {
    name: 'QuotaExceededError',
    quota: 'totalEvents',
  });
  t.equal(
    (await deps.repository.find('events', owner, { where: null, sort: [], limit: 10, page: 1 })).totalDocs,
    0,
  );
});

t.test('users are made by admins, with a checked password and the default trust level', async (t) => {
  const deps = collectionUseCaseDeps();
  const { owner, admin } = await ownedHierarchy(deps);
  const input = { email: ' New@Example.org ', password: 'a long enough password' };
  await t.rejects(createDocument(deps, 'users', owner, input), { name: 'ForbiddenError' });
  await t.rejects(createDocument(deps, 'users', admin, { ...input, password: 'short' }), {
    name: 'ValidationError',
    field: 'password',
  });
  await t.rejects(createDocument(deps, 'users', admin, { ...input, email: 'nope' }), {
    name: 'ValidationError',
    field: 'email',
  });
  const user = await createDocument(deps, 'users', admin, input);
  t.match(user, { email: 'New@Example.org', role: 'user', trustLevel: deps.defaultTrustLevel });
  t.match(
    await createDocument(deps, 'users', admin, {
      ...input,
      email: 'boss@example.org',
      role: 'admin',
      trustLevel: 4,
    }),
    {
      role: 'admin',
      trustLevel: 4,
    },
  );
  await t.rejects(createDocument(deps, 'users', admin, { ...input, email: 'NEW@example.org' }), {
    code: 'DUPLICATE',
  });
});

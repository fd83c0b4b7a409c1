import type { Test } from 'tap';
import type { Viewer } from '../../../src/domain/access.ts';
import type { WhereNode } from '../../../src/domain/read/where.ts';
import type { CollectionRepository } from '../../../src/ports/collections/collection-repository.ts';

// What every CollectionRepository does for the document collections (users, catalogs, datasets,
// events), as one suite: run against the in-memory fake (test/unit/fakes/collections/
// collection-repository.test.ts) and against postgresCollectionRepository
// (test/integration/collections/collection-repository-contract.test.ts). Each case gets an empty
// repository of its own (`make` may tie it to the case, as a fresh database is).

export type MakeCollectionRepository = (t: Test) => Promise<CollectionRepository>;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DUPLICATE = { kind: 'conflict', code: 'DUPLICATE' };
const INVALID = { kind: 'validation', code: 'INVALID_VALUE' };
const NO_PARENT = { kind: 'validation', code: 'INVALID_REFERENCE' };

type Fixture = Awaited<ReturnType<typeof fixture>>;

/** Two users and an admin, a public and a private catalog of the owner's, and datasets and events in them. */
async function fixture(repository: CollectionRepository) {
  const user = async (email: string, role = 'user') => {
    const id = await repository.insert('users', { email, passwordHash: 'h', role, trustLevel: 2 });
    return { id, email, role, trustLevel: 2 } as Exclude<Viewer, null>;
  };
  const owner = await user('owner@example.org');
  const stranger = await user('stranger@example.org');
  const admin = await user('admin@example.org', 'admin');
  const catalog = (slug: string, isPublic: boolean) =>
    repository.insert('catalogs', { slug, title: slug, isPublic, createdBy: owner.id });
  const open = await catalog('open', true);
  const closed = await catalog('closed', false);
  const dataset = (catalogId: number, slug: string, isPublic: boolean, createdBy = owner.id) =>
    repository.insert('datasets', { catalog: catalogId, slug, title: slug, isPublic, createdBy });
  const sets = {
    public: await dataset(open, 'public-set', true),
    hidden: await dataset(open, 'hidden-set', false),
    strangers: await dataset(open, 'strangers-set', false, stranger.id),
    closed: await dataset(closed, 'closed-set', true),
  };
  const event = (
    datasetId: number,
    catalogId: number,
    uniqueId: string,
    extra: Record<string, unknown> = {},
  ) =>
    repository.insert('events', {
      dataset: datasetId,
      catalog: catalogId,
      uniqueId,
      eventTimestamp: '2024-05-01T10:00:00Z',
      ...extra,
    });
  const events = {
    public: await event(sets.public, open, 'e1'),
    hidden: await event(sets.hidden, open, 'e2'),
    closed: await event(sets.closed, closed, 'e3'),
  };
  return { owner, stranger, admin, catalogs: { open, closed }, sets, events, event };
}

const ids = async (
  repository: CollectionRepository,
  collection: 'users' | 'catalogs' | 'datasets' | 'events',
  viewer: Viewer,
  where: WhereNode | null = null,
) =>
  (
    await repository.find(collection, viewer, {
      where,
      sort: [{ field: 'id', descending: false }],
      limit: 100,
      page: 1,
    })
  ).docs.map((doc) => doc.id);

export function collectionRepositoryContract(t: Test, make: MakeCollectionRepository): void {
  t.test('documents come back with their defaults, in the shape the API shows', async (t) => {
    const repository = await make(t);
    const userId = await repository.insert('users', { email: 'Someone@Example.org', passwordHash: 'secret' });
    const admin = { id: userId, email: 'x', role: 'admin', trustLevel: 5 } as const;
    const user = await repository.findById('users', admin, userId);
    t.match(user, {
      id: userId,
      email: 'Someone@Example.org',
      role: 'user',
      trustLevel: 1,
      createdAt: ISO,
      updatedAt: ISO,
    });
    t.notOk(user && 'passwordHash' in user, 'never the password hash');
    const catalog = await repository.insert('catalogs', { slug: 'c', title: 'C' });
    t.match(await repository.findById('catalogs', admin, catalog), {
      id: catalog,
      slug: 'c',
      title: 'C',
      description: null,
      isPublic: false,
      createdBy: null,
      createdAt: ISO,
    });
    const dataset = await repository.insert('datasets', { catalog, slug: 'd', title: 'D' });
    t.match(await repository.findById('datasets', admin, dataset), {
      catalog,
      slug: 'd',
      isPublic: true,
      createdBy: null,
      dateFields: [],
    });
    const event = await repository.insert('events', {
      dataset,
      catalog,
      uniqueId: 'u1',
      eventTimestamp: '2024-05-01T12:00:00+02:00',
      location: { longitude: 13.4, latitude: 52.5 },
      data: { magnitude: 4.5, tags: ['a'] },
    });
    t.same(await repository.findById('events', admin, event), {
      id: event,
      dataset,
      catalog,
      uniqueId: 'u1',
      title: null,
      data: { magnitude: 4.5, tags: ['a'] },
      location: { longitude: 13.4, latitude: 52.5 },
      eventTimestamp: '2024-05-01T10:00:00.000Z',
      isValid: true,
      createdAt: (await repository.findById('events', admin, event))?.createdAt,
      updatedAt: (await repository.findById('events', admin, event))?.updatedAt,
    });
  });

  t.test('the tables refuse what their constraints refuse', async (t) => {
    const repository = await make(t);
    await repository.insert('users', { email: 'a@example.org', passwordHash: 'h' });
    await t.rejects(repository.insert('users', { email: 'A@EXAMPLE.org', passwordHash: 'h' }), DUPLICATE);
    await t.rejects(
      repository.insert('users', { email: 'b@example.org', passwordHash: 'h', role: 'root' }),
      INVALID,
    );
    await t.rejects(
      repository.insert('users', { email: 'b@example.org', passwordHash: 'h', trustLevel: 9 }),
      INVALID,
    );
    const catalog = await repository.insert('catalogs', { slug: 'taken', title: 'T' });
    await t.rejects(repository.insert('catalogs', { slug: 'taken', title: 'T' }), DUPLICATE);
    await t.rejects(repository.insert('catalogs', { slug: 'Not A Slug', title: 'T' }), INVALID);
    await t.rejects(repository.insert('catalogs', { slug: 'untitled' }), INVALID);
    await t.rejects(repository.insert('catalogs', { slug: 'empty', title: '' }), INVALID);
    await t.rejects(
      repository.insert('catalogs', { slug: 'owned', title: 'T', createdBy: 2_000_000_000 }),
      NO_PARENT,
    );
    await t.rejects(
      repository.insert('datasets', { catalog: 2_000_000_000, slug: 'd', title: 'D' }),
      NO_PARENT,
    );
    const dataset = await repository.insert('datasets', { catalog, slug: 'shared', title: 'D' });
    const other = await repository.insert('catalogs', { slug: 'other', title: 'O' });
    await t.rejects(
      repository.insert('datasets', { catalog: other, slug: 'shared', title: 'D' }),
      DUPLICATE,
      'dataset slugs are unique across catalogs',
    );
    const event = { dataset, catalog, uniqueId: 'same', eventTimestamp: '2024-01-01T00:00:00Z' };
    await repository.insert('events', event);
    await t.rejects(repository.insert('events', event), DUPLICATE);
    await t.rejects(
      repository.insert('events', { ...event, uniqueId: 'x', catalog: other }),
      NO_PARENT,
      "not in its dataset's catalog",
    );
    await t.rejects(
      repository.insert('events', { dataset, catalog, eventTimestamp: '2024-01-01T00:00:00Z' }),
      INVALID,
    );
    const second = await repository.insert('datasets', { catalog, slug: 'second', title: 'S' });
    t.ok(
      await repository.insert('events', { ...event, dataset: second }),
      'the same unique id in another dataset',
    );
  });

  t.test('reads show only what the viewer may see', async (t) => {
    const repository = await make(t);
    const f: Fixture = await fixture(repository);
    const { owner, stranger, admin, catalogs, sets, events } = f;
    t.same(await ids(repository, 'catalogs', null), [catalogs.open]);
    t.same(await ids(repository, 'catalogs', owner), [catalogs.open, catalogs.closed]);
    t.same(await ids(repository, 'datasets', null), [sets.public]);
    t.same(
      await ids(repository, 'datasets', stranger),
      [sets.public, sets.strangers],
      'and the dataset they made',
    );
    t.same(
      await ids(repository, 'datasets', owner),
      Object.values(sets).sort((a, b) => a - b),
    );
    t.same(await ids(repository, 'events', null), [events.public]);
    t.same(await ids(repository, 'events', admin), [events.public, events.hidden, events.closed]);
    t.same(await ids(repository, 'users', null), []);
    t.same(await ids(repository, 'users', stranger), [stranger.id], 'a user sees their own row');
    t.same(await ids(repository, 'users', admin), [owner.id, stranger.id, admin.id]);
    t.equal(await repository.findById('catalogs', stranger, catalogs.closed), null);
    t.match(await repository.findById('catalogs', admin, catalogs.closed), { id: catalogs.closed });
    t.equal(await repository.findById('events', null, events.hidden), null);
    t.equal(await repository.findById('datasets', owner, 2_000_000_000), null);
  });

  t.test(
    'where: comparisons, text matches, lists and presence; a null matches none but not_equals',
    async (t) => {
      const repository = await make(t);
      const catalog = await repository.insert('catalogs', { slug: 'c', title: 'C', isPublic: true });
      const dataset = await repository.insert('datasets', { catalog, slug: 'd', title: 'D' });
      const at = (day: number) => `2024-05-0${day}T00:00:00.000Z`;
      const add = (n: number, title: string | null) =>
        repository.insert('events', { dataset, catalog, uniqueId: `u${n}`, title, eventTimestamp: at(n) });
      const [quake, storm, flood, none] = [
        await add(1, 'Big Quake north'),
        await add(2, 'storm'),
        await add(3, 'Flood north'),
        await add(4, null),
      ];
      const where = (node: WhereNode) => ids(repository, 'events', null, node);
      t.same(await where({ field: 'title', operator: 'equals', value: 'storm' }), [storm]);
      t.same(await where({ field: 'title', operator: 'equals', value: 'Storm' }), [], 'equals is exact');
      t.same(await where({ field: 'title', operator: 'not_equals', value: 'storm' }), [quake, flood, none]);
      t.same(await where({ field: 'title', operator: 'contains', value: 'NORTH' }), [quake, flood]);
      t.same(await where({ field: 'title', operator: 'like', value: 'north big' }), [quake]);
      t.same(await where({ field: 'title', operator: 'in', value: ['storm', 'Flood north'] }), [
        storm,
        flood,
      ]);
      t.same(await where({ field: 'title', operator: 'not_in', value: ['storm'] }), [quake, flood, none]);
      t.same(await where({ field: 'title', operator: 'exists', value: false }), [none]);
      t.same(await where({ field: 'eventTimestamp', operator: 'greater_than', value: at(2) }), [flood, none]);
      t.same(await where({ field: 'eventTimestamp', operator: 'less_than_equal', value: at(2) }), [
        quake,
        storm,
      ]);
      t.same(await where({ field: 'id', operator: 'greater_than_equal', value: flood }), [flood, none]);
      t.same(
        await where({
          or: [
            { field: 'title', operator: 'equals', value: 'storm' },
            {
              and: [
                { field: 'title', operator: 'contains', value: 'north' },
                { field: 'eventTimestamp', operator: 'greater_than', value: at(1) },
              ],
            },
          ],
        }),
        [storm, flood],
      );
      t.same(await where({ field: 'isValid', operator: 'equals', value: true }), [quake, storm, flood, none]);
    },
  );

  t.test('sorting puts nulls last and breaks ties by the newest id; pages count every match', async (t) => {
    const repository = await make(t);
    const catalog = (slug: string, description: string | null) =>
      repository.insert('catalogs', { slug, title: 'same', description, isPublic: true });
    const [a, b, c, d] = [
      await catalog('a', 'beta'),
      await catalog('b', null),
      await catalog('c', 'alpha'),
      await catalog('d', 'beta'),
    ];
    const sorted = async (sort: { field: string; descending: boolean }[], limit = 10, page = 1) =>
      repository.find('catalogs', null, { where: null, sort, limit, page });
    t.same(
      (await sorted([])).docs.map((doc) => doc.id),
      [d, c, b, a],
      'no sort: newest first',
    );
    t.same(
      (await sorted([{ field: 'description', descending: false }])).docs.map((doc) => doc.id),
      [c, d, a, b],
    );
    t.same(
      (await sorted([{ field: 'description', descending: true }])).docs.map((doc) => doc.id),
      [d, a, c, b],
    );
    t.same(
      (
        await sorted([
          { field: 'title', descending: false },
          { field: 'id', descending: false },
        ])
      ).docs.map((doc) => doc.id),
      [a, b, c, d],
    );
    const page = await sorted([{ field: 'slug', descending: false }], 3, 2);
    t.same(
      page.docs.map((doc) => doc.id),
      [d],
    );
    t.equal(page.totalDocs, 4);
    t.same((await sorted([], 3, 3)).docs, [], 'past the end');
  });

  t.test('hierarchy: where a document sits, whoever asks', async (t) => {
    const repository = await make(t);
    const { owner, stranger, catalogs, sets, events } = await fixture(repository);
    // The catalog's facts carry its id: an API key limited to catalogs is judged by it (access.ts).
    const open = { id: catalogs.open, isPublic: true, createdBy: owner.id };
    t.same(await repository.hierarchy('catalogs', catalogs.open), {
      catalogId: catalogs.open,
      catalog: open,
      datasetId: null,
      dataset: null,
    });
    t.same(await repository.hierarchy('datasets', sets.strangers), {
      catalogId: catalogs.open,
      catalog: open,
      datasetId: sets.strangers,
      dataset: { isPublic: false, createdBy: stranger.id },
    });
    t.same(await repository.hierarchy('events', events.closed), {
      catalogId: catalogs.closed,
      catalog: { id: catalogs.closed, isPublic: false, createdBy: owner.id },
      datasetId: sets.closed,
      dataset: { isPublic: true, createdBy: owner.id },
    });
    for (const collection of ['catalogs', 'datasets', 'events'] as const)
      t.equal(await repository.hierarchy(collection, 2_000_000_000), null, collection);
  });

  t.test('update changes the fields given, under the same constraints', async (t) => {
    const repository = await make(t);
    const { owner, admin, catalogs, sets, events } = await fixture(repository);
    const before = await repository.findById('catalogs', admin, catalogs.open);
    await repository.update('catalogs', catalogs.open, { title: 'Renamed', description: 'now described' });
    const after = await repository.findById('catalogs', admin, catalogs.open);
    t.match(after, { slug: 'open', title: 'Renamed', description: 'now described', createdBy: owner.id });
    t.ok(Date.parse(String(after?.updatedAt)) >= Date.parse(String(before?.updatedAt)));
    await t.rejects(repository.update('catalogs', catalogs.open, { slug: 'closed' }), DUPLICATE);
    await t.rejects(repository.update('catalogs', catalogs.open, { title: null }), INVALID);
    await repository.update('catalogs', catalogs.open, {});
    await repository.update('catalogs', 2_000_000_000, { title: 'Nobody' });
    t.match(
      await repository.findById('catalogs', admin, catalogs.open),
      { title: 'Renamed' },
      'unchanged by the rest',
    );
    await repository.update('datasets', sets.public, { dateFields: ['observed.at', 'end'] });
    t.match(await repository.findById('datasets', admin, sets.public), {
      dateFields: ['observed.at', 'end'],
      title: 'public-set',
    });
    await repository.update('events', events.public, { data: { n: 2 }, isValid: false, location: null });
    t.match(await repository.findById('events', admin, events.public), {
      data: { n: 2 },
      isValid: false,
      location: null,
      uniqueId: 'e1',
    });
    await repository.update('users', owner.id, { role: 'admin', trustLevel: 5 });
    t.match(await repository.findById('users', admin, owner.id), {
      role: 'admin',
      trustLevel: 5,
      email: owner.email,
    });
  });

  t.test('remove takes what is below along; a removed owner leaves catalogs without one', async (t) => {
    const repository = await make(t);
    const { owner, admin, catalogs, sets, events } = await fixture(repository);
    await repository.remove('events', events.public);
    t.equal(await repository.findById('events', admin, events.public), null);
    await repository.remove('datasets', sets.hidden);
    t.equal(await repository.hierarchy('events', events.hidden), null, "the dataset's events go with it");
    await repository.remove('catalogs', catalogs.closed);
    t.equal(await repository.hierarchy('datasets', sets.closed), null);
    t.equal(await repository.hierarchy('events', events.closed), null);
    await repository.remove('users', owner.id);
    t.match(await repository.findById('catalogs', admin, catalogs.open), { createdBy: null });
    t.match(await repository.findById('datasets', admin, sets.public), { createdBy: null });
    await repository.remove('catalogs', 2_000_000_000);
    t.same(await ids(repository, 'catalogs', admin), [catalogs.open]);
  });
}

import { canReadCatalog, canReadDataset, type Viewer } from '../../../src/domain/access.ts';
import type { CollectionSlug, DocumentCollectionSlug } from '../../../src/domain/collections/collections.ts';
import { DomainError } from '../../../src/domain/errors.ts';
import type { Condition, SortKey, WhereNode } from '../../../src/domain/read/where.ts';
import type {
  CollectionRepository,
  Doc,
  DocValues,
} from '../../../src/ports/collections/collection-repository.ts';
import type { Clock } from '../../../src/ports/clock.ts';

// The CollectionRepository port in memory, for the document collections the generic endpoints
// write (users, catalogs, datasets, events); the scraper collections are written by the scraper
// use cases and are not here. Rows are kept as the documents postgresCollectionRepository answers,
// with the tables' defaults and constraints (0001_foundation.sql and after) kept as the database
// keeps them: a taken slug, address or unique id is a DUPLICATE conflict, a missing or malformed
// value INVALID_VALUE, a parent that does not exist INVALID_REFERENCE; deletes cascade down the
// hierarchy and leave a deleted user's catalogs and datasets without an owner. It passes the same
// behaviour suite (test/contracts/collections/collection-repository.ts).

type Row = Doc & { passwordHash?: string };

const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const WRITABLE: Record<DocumentCollectionSlug, string[]> = {
  users: ['email', 'passwordHash', 'role', 'trustLevel'],
  catalogs: ['slug', 'title', 'description', 'isPublic', 'createdBy'],
  datasets: ['catalog', 'slug', 'title', 'description', 'isPublic', 'createdBy', 'dateFields'],
  events: ['dataset', 'catalog', 'uniqueId', 'title', 'data', 'location', 'eventTimestamp', 'isValid'],
};
const DEFAULTS: Record<DocumentCollectionSlug, DocValues> = {
  users: { role: 'user', trustLevel: 1 },
  catalogs: { description: null, isPublic: false, createdBy: null },
  datasets: { description: null, isPublic: true, createdBy: null, dateFields: [] },
  events: { title: null, data: {}, location: null, isValid: true },
};
const REQUIRED: Record<DocumentCollectionSlug, string[]> = {
  users: ['email', 'passwordHash'],
  catalogs: ['slug', 'title'],
  datasets: ['catalog', 'slug', 'title'],
  events: ['dataset', 'catalog', 'uniqueId', 'eventTimestamp'],
};

const invalid = () => new DomainError('validation', 'A value is not allowed here', { code: 'INVALID_VALUE' });
const duplicate = () =>
  new DomainError('conflict', 'A document with this value already exists', { code: 'DUPLICATE' });
const missingReference = () =>
  new DomainError('validation', 'A referenced document does not exist', { code: 'INVALID_REFERENCE' });

function isDocumentCollection(collection: CollectionSlug): collection is DocumentCollectionSlug {
  return collection in WRITABLE;
}

/** A value as the column's type stores it (what the SQL casts in the adapter do). */
function stored(field: string, value: unknown): unknown {
  if (field !== 'dateFields' && (value === null || value === undefined)) return null;
  if (field === 'eventTimestamp') {
    const at = new Date(String(value));
    if (Number.isNaN(at.getTime()))
      throw new Error(`invalid input syntax for type timestamp: "${String(value)}"`);
    return at.toISOString();
  }
  if (field === 'location') {
    const { longitude, latitude } = value as { longitude: number; latitude: number };
    return { longitude, latitude };
  }
  if (['isPublic', 'isValid'].includes(field)) return Boolean(value);
  if (['trustLevel', 'createdBy', 'catalog', 'dataset'].includes(field)) return Number(value);
  if (field === 'dateFields') return Array.isArray(value) ? [...(value as unknown[])] : [];
  if (field === 'data') return structuredClone(value);
  return String(value);
}

/** Payload's where, over documents: SQL's three-valued logic, where a comparison with null is false. */
function matches(doc: Doc, node: WhereNode | null): boolean {
  if (node === null) return true;
  if ('and' in node) return node.and.every((child) => matches(doc, child));
  if ('or' in node) return node.or.some((child) => matches(doc, child));
  return holds(doc[node.field], node);
}

const comparable = (value: unknown): number | string | boolean =>
  typeof value === 'string' && /^\d{4}-\d\d-\d\dT/.test(value) ? Date.parse(value) : (value as string);

function holds(actual: unknown, c: Condition): boolean {
  const value = actual === undefined ? null : actual;
  const text = String(value).toLowerCase();
  switch (c.operator) {
    case 'exists':
      return (value !== null) === c.value;
    case 'not_equals':
      return value === null || comparable(value) !== comparable(c.value);
    case 'in':
      return value !== null && c.value.some((v) => comparable(v) === comparable(value));
    case 'not_in':
      return value === null || !c.value.some((v) => comparable(v) === comparable(value));
    case 'contains':
      return value !== null && text.includes(String(c.value).toLowerCase());
    case 'like':
      return String(c.value)
        .split(/\s+/)
        .filter(Boolean)
        .every((word) => value !== null && text.includes(word.toLowerCase()));
  }
  if (value === null) return false;
  const [a, b] = [comparable(value), comparable(typeof value === 'number' ? Number(c.value) : c.value)];
  switch (c.operator) {
    case 'equals':
      return a === b;
    case 'greater_than':
      return a > b;
    case 'greater_than_equal':
      return a >= b;
    case 'less_than':
      return a < b;
    case 'less_than_equal':
      return a <= b;
  }
}

/** ORDER BY the keys, nulls last either way, then the newest id first unless the keys name the id. */
function order(sort: SortKey[]) {
  const keys = sort.some((key) => key.field === 'id') ? sort : [...sort, { field: 'id', descending: true }];
  return (a: Doc, b: Doc): number => {
    for (const { field, descending } of keys) {
      const [x, y] = [a[field] ?? null, b[field] ?? null];
      if (x === y) continue;
      if (x === null) return 1;
      if (y === null) return -1;
      const before = comparable(x) < comparable(y) ? -1 : comparable(x) > comparable(y) ? 1 : 0;
      if (before !== 0) return descending ? -before : before;
    }
    return 0;
  };
}

export function memoryCollectionRepository(clock: Clock = { now: () => new Date() }): CollectionRepository {
  const tables: Record<DocumentCollectionSlug, Map<number, Row>> = {
    users: new Map(),
    catalogs: new Map(),
    datasets: new Map(),
    events: new Map(),
  };
  const lastIds: Record<DocumentCollectionSlug, number> = { users: 0, catalogs: 0, datasets: 0, events: 0 };
  const tableOf = (collection: CollectionSlug) => {
    if (!isDocumentCollection(collection)) throw new Error(`${collection}: not in the memory repository`);
    return tables[collection];
  };

  const readable = (collection: DocumentCollectionSlug, viewer: Viewer, row: Row): boolean => {
    if (collection === 'users') return viewer !== null && (viewer.role === 'admin' || viewer.id === row.id);
    if (collection === 'catalogs') return canReadCatalog(viewer, row as never);
    const dataset = tables.datasets.get((collection === 'datasets' ? row.id : row.dataset) as number);
    const catalog = tables.catalogs.get(dataset?.catalog as number);
    return (
      dataset !== undefined &&
      catalog !== undefined &&
      canReadDataset(viewer, catalog as never, dataset as never)
    );
  };

  /** The checks the tables' constraints make on a row about to be stored. */
  function check(collection: DocumentCollectionSlug, row: Row): void {
    if (REQUIRED[collection].some((field) => row[field] === null || row[field] === undefined))
      throw invalid();
    const others = [...tables[collection].values()].filter((other) => other.id !== row.id);
    const owner = row.createdBy as number | null | undefined;
    switch (collection) {
      case 'users':
        if (!['admin', 'user'].includes(row.role as string)) throw invalid();
        if (
          !Number.isInteger(row.trustLevel) ||
          (row.trustLevel as number) < 0 ||
          (row.trustLevel as number) > 5
        )
          throw invalid();
        if (others.some((o) => (o.email as string).toLowerCase() === (row.email as string).toLowerCase()))
          throw duplicate();
        return;
      case 'catalogs':
      case 'datasets':
        if (
          !SLUG.test(row.slug as string) ||
          !(row.title as string).length ||
          (row.title as string).length > 255
        )
          throw invalid();
        if (others.some((o) => o.slug === row.slug)) throw duplicate();
        if (owner !== null && owner !== undefined && !tables.users.has(owner)) throw missingReference();
        if (collection === 'datasets' && !tables.catalogs.has(row.catalog as number))
          throw missingReference();
        return;
      case 'events': {
        const dataset = tables.datasets.get(row.dataset as number);
        if (!dataset || dataset.catalog !== row.catalog) throw missingReference();
        if (others.some((o) => o.dataset === row.dataset && o.uniqueId === row.uniqueId)) throw duplicate();
      }
    }
  }

  function valuesOf(collection: DocumentCollectionSlug, values: DocValues): DocValues {
    return Object.fromEntries(
      Object.entries(values).map(([field, value]) => {
        if (!WRITABLE[collection].includes(field))
          throw new Error(`${collection}: field ${field} is not writable`);
        return [field, stored(field, value)];
      }),
    );
  }

  function remove(collection: DocumentCollectionSlug, id: number): void {
    if (!tables[collection].delete(id)) return;
    const below = (table: 'datasets' | 'events', parent: string) => {
      for (const row of [...tables[table].values()]) if (row[parent] === id) remove(table, row.id);
    };
    if (collection === 'catalogs') below('datasets', 'catalog');
    if (collection === 'datasets') below('events', 'dataset');
    if (collection === 'users') {
      for (const row of [...tables.catalogs.values(), ...tables.datasets.values()])
        if (row.createdBy === id) row.createdBy = null;
    }
  }

  const shown = ({ passwordHash: _, ...doc }: Row): Doc => structuredClone(doc);

  return {
    async find(collection, viewer, query) {
      const visible = [...tableOf(collection).values()]
        .filter(
          (row) => readable(collection as DocumentCollectionSlug, viewer, row) && matches(row, query.where),
        )
        .sort(order(query.sort));
      const start = (query.page - 1) * query.limit;
      return { docs: visible.slice(start, start + query.limit).map(shown), totalDocs: visible.length };
    },
    async findById(collection, viewer, id) {
      const row = tableOf(collection).get(id);
      return row && readable(collection as DocumentCollectionSlug, viewer, row) ? shown(row) : null;
    },
    async hierarchy(collection, id) {
      const row = tables[collection].get(id);
      if (!row) return null;
      const dataset =
        collection === 'catalogs'
          ? null
          : collection === 'datasets'
            ? row
            : tables.datasets.get(row.dataset as number);
      const catalog = collection === 'catalogs' ? row : tables.catalogs.get(dataset?.catalog as number);
      if (!catalog) return null;
      const facts = (r: Row) => ({
        isPublic: r.isPublic as boolean,
        createdBy: (r.createdBy as number | null) ?? null,
      });
      return {
        catalogId: catalog.id,
        catalog: { id: catalog.id as number, ...facts(catalog) },
        datasetId: dataset?.id ?? null,
        dataset: dataset ? facts(dataset) : null,
      };
    },
    async insert(collection, values) {
      const table = tableOf(collection);
      const slug = collection as DocumentCollectionSlug;
      const now = clock.now().toISOString();
      const row: Row = {
        ...structuredClone(DEFAULTS[slug]),
        ...valuesOf(slug, values),
        id: lastIds[slug] + 1,
        createdAt: now,
        updatedAt: now,
      };
      check(slug, row);
      lastIds[slug] += 1;
      table.set(row.id, row);
      return row.id;
    },
    async update(collection, id, values) {
      const table = tableOf(collection);
      const row = table.get(id);
      if (!row || Object.keys(values).length === 0) return;
      const slug = collection as DocumentCollectionSlug;
      const changed: Row = { ...row, ...valuesOf(slug, values), updatedAt: clock.now().toISOString() };
      check(slug, changed);
      table.set(id, changed);
    },
    async remove(collection, id) {
      tableOf(collection);
      remove(collection as DocumentCollectionSlug, id);
    },
  };
}

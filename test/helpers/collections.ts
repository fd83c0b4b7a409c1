import { Type } from 'typebox';
import { type DatabasePool, row, sql } from '../../src/adapters/postgres/database.ts';

// Test data: a catalog or dataset by slug, created when absent (the service itself never looks a
// collection up by slug to write into it: its own are found by system key, EventStore).

const Id = row(Type.Object({ id: Type.Number() }));
type Described = { slug: string; title: string; description?: string; isPublic: boolean };

export async function ensureCatalog(pool: DatabasePool, catalog: Described): Promise<number> {
  // The no-op update makes RETURNING yield the existing row's id on conflict.
  return pool.oneFirst(sql.type(Id)`
    insert into catalogs (slug, title, description, is_public)
    values (${catalog.slug}, ${catalog.title}, ${catalog.description ?? null}, ${catalog.isPublic})
    on conflict (slug) do update set slug = excluded.slug
    returning id`);
}

export async function ensureDataset(
  pool: DatabasePool,
  catalogId: number,
  dataset: Described,
): Promise<number> {
  return pool.oneFirst(sql.type(Id)`
    insert into datasets (catalog_id, slug, title, description, is_public)
    values (${catalogId}, ${dataset.slug}, ${dataset.title}, ${dataset.description ?? null}, ${dataset.isPublic})
    on conflict (slug) do update set slug = excluded.slug
    returning id`);
}

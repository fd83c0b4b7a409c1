import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { parseViewState, type SavedView, viewCodeFrom } from '../../../domain/site/saved-views.ts';
import type { SavedViewStore } from '../../../ports/site/saved-view-store.ts';
import { type DatabasePool, row, sql } from '../database.ts';

const ViewRow = Type.Object({
  id: Type.Number(),
  code: Type.String(),
  owner_id: Type.Number(),
  title: Type.String(),
  description: Type.String(),
  state: Type.Unknown(),
  is_public: Type.Boolean(),
  embed_origins: Type.Array(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
});

const COLUMNS = sql.fragment`id, code, owner_id, title, description, state, is_public, embed_origins,
  created_at, updated_at`;

function viewOf(r: {
  id: number;
  code: string;
  owner_id: number;
  title: string;
  description: string;
  state: unknown;
  is_public: boolean;
  embed_origins: string[];
  created_at: string;
  updated_at: string;
}): SavedView {
  return {
    id: r.id,
    code: r.code,
    ownerId: r.owner_id,
    title: r.title,
    description: r.description,
    // Checked before it was stored; read back through the same parser so a row edited by hand
    // cannot hand the page something it does not expect.
    state: parseViewState(r.state),
    isPublic: r.is_public,
    embedOrigins: r.embed_origins,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function postgresSavedViewStore(pool: DatabasePool): SavedViewStore {
  const one = async (where: ReturnType<typeof sql.fragment>) => {
    const found = await pool.maybeOne(
      sql.type(row(ViewRow))`select ${COLUMNS} from saved_views where ${where}`,
    );
    return found ? viewOf(found) : null;
  };
  return {
    async create(ownerId, fields) {
      // A taken code (one chance in 8·10^17 per stored view) is drawn again.
      for (let attempt = 0; attempt < 5; attempt++) {
        const code = viewCodeFrom(randomBytes(32));
        if (code === null) continue;
        const created = await pool.maybeOne(sql.type(row(ViewRow))`
          insert into saved_views (code, owner_id, title, description, state, is_public, embed_origins)
          values (${code}, ${ownerId}, ${fields.title}, ${fields.description}, ${sql.jsonb(fields.state)},
                  ${fields.isPublic}, ${sql.array(fields.embedOrigins, 'text')})
          on conflict (code) do nothing
          returning ${COLUMNS}`);
        if (created) return viewOf(created);
      }
      throw new Error('could not draw a free view code');
    },
    findByCode: (code) => one(sql.fragment`code = ${code}`),
    findById: (id) => one(sql.fragment`id = ${id}`),
    async listByOwner(ownerId) {
      const rows = await pool.any(sql.type(row(ViewRow))`
        select ${COLUMNS} from saved_views where owner_id = ${ownerId} order by created_at desc, id desc`);
      return rows.map(viewOf);
    },
    async update(id, changes) {
      const set = [
        changes.title !== undefined ? sql.fragment`title = ${changes.title}` : null,
        changes.description !== undefined ? sql.fragment`description = ${changes.description}` : null,
        changes.state !== undefined ? sql.fragment`state = ${sql.jsonb(changes.state)}` : null,
        changes.isPublic !== undefined ? sql.fragment`is_public = ${changes.isPublic}` : null,
        changes.embedOrigins !== undefined
          ? sql.fragment`embed_origins = ${sql.array(changes.embedOrigins, 'text')}`
          : null,
      ].filter((part) => part !== null);
      const updated = await pool.maybeOne(sql.type(row(ViewRow))`
        update saved_views set ${sql.join([...set, sql.fragment`updated_at = now()`], sql.fragment`, `)}
        where id = ${id} returning ${COLUMNS}`);
      return updated ? viewOf(updated) : null;
    },
    async remove(id) {
      const result = await pool.query(sql.unsafe`delete from saved_views where id = ${id}`);
      return result.rowCount > 0;
    },
  };
}

import { Type } from 'typebox';
import { type ApiKey, apiKeyPrefix, LAST_USED_RESOLUTION_MS } from '../../../domain/accounts/api-keys.ts';
import type { ApiKeyStore } from '../../../ports/accounts/api-key-store.ts';
import { type DatabasePool, Nullable, row, sql } from '../database.ts';
import { toStoredUser } from './user-store.ts';

const KeyColumns = {
  id: Type.Number(),
  name: Type.String(),
  scope: Type.Union([Type.Literal('read'), Type.Literal('write')]),
  catalog_ids: Nullable(Type.Array(Type.Number())),
  hint: Type.String(),
  created_at: Type.String(),
  last_used_at: Nullable(Type.String()),
};
const KeyRow = row(Type.Object(KeyColumns));
const LiveRow = row(
  Type.Object({
    ...KeyColumns,
    secret_hash: Type.Any(),
    user_id: Type.Number(),
    email: Type.String(),
    role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
    trust_level: Type.Number(),
  }),
);

const keyColumns = sql.fragment`k.id, k.name, k.scope, k.catalog_ids::float8[] as catalog_ids, k.hint,
  to_char(k.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
  to_char(k.last_used_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as last_used_at`;

function toApiKey(stored: {
  id: number;
  name: string;
  scope: 'read' | 'write';
  catalog_ids: number[] | null;
  hint: string;
  created_at: string;
  last_used_at: string | null;
}): ApiKey {
  return {
    id: stored.id,
    name: stored.name,
    scope: stored.scope,
    catalogIds: stored.catalog_ids,
    prefix: apiKeyPrefix(stored.id, stored.hint),
    createdAt: stored.created_at,
    lastUsedAt: stored.last_used_at,
  };
}

export function postgresApiKeyStore(pool: DatabasePool): ApiKeyStore {
  return {
    async create(userId, key, secretHash, hint) {
      const ids = key.catalogIds === null ? null : sql.array(key.catalogIds, 'int8');
      const created = await pool.one(sql.type(KeyRow)`
        with k as (
          insert into api_keys (user_id, name, scope, catalog_ids, secret_hash, hint)
          values (${userId}, ${key.name}, ${key.scope}, ${ids}, ${sql.binary(secretHash)}, ${hint})
          returning *)
        select ${keyColumns} from k`);
      return toApiKey(created);
    },
    async list(userId) {
      const rows = await pool.any(sql.type(KeyRow)`
        select ${keyColumns} from api_keys k
        where k.user_id = ${userId} and k.revoked_at is null order by k.id desc`);
      return rows.map(toApiKey);
    },
    async countLive(userId) {
      return pool.oneFirst(sql.type(row(Type.Object({ n: Type.Number() })))`
        select count(*)::int as n from api_keys where user_id = ${userId} and revoked_at is null`);
    },
    async revoke(userId, id) {
      const result = await pool.query(sql.unsafe`
        update api_keys set revoked_at = now()
        where id = ${id} and user_id = ${userId} and revoked_at is null`);
      return result.rowCount > 0;
    },
    async ownedCatalogs(userId, catalogIds) {
      const rows = await pool.any(sql.type(row(Type.Object({ id: Type.Number() })))`
        select id from catalogs where created_by = ${userId} and id = any(${sql.array(catalogIds, 'int8')})`);
      return rows.map((r) => r.id);
    },
    async catalogChoices(userId, limit) {
      const rows = await pool.any(sql.type(row(Type.Object({ id: Type.Number(), title: Type.String() })))`
        select id, title from catalogs where created_by = ${userId} order by lower(title), id limit ${limit}`);
      return [...rows];
    },
    async findLive(id) {
      const found = await pool.maybeOne(sql.type(LiveRow)`
        select ${keyColumns}, k.secret_hash, u.id as user_id, u.email, u.role, u.trust_level
        from api_keys k join users u on u.id = k.user_id
        where k.id = ${id} and k.revoked_at is null`);
      if (!found) return null;
      const owner = toStoredUser({ ...found, id: found.user_id });
      return { key: toApiKey(found), secretHash: Buffer.from(found.secret_hash as Uint8Array), owner };
    },
    async touch(id, at) {
      const since = new Date(at.getTime() - LAST_USED_RESOLUTION_MS).toISOString();
      await pool.query(sql.unsafe`
        update api_keys set last_used_at = ${at.toISOString()}
        where id = ${id} and (last_used_at is null or last_used_at < ${since})`);
    },
  };
}

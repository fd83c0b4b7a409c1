import { randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { SessionStore } from '../../../ports/accounts/session-store.ts';
import { type DatabasePool, row, sql } from '../database.ts';
import { toStoredUser } from './user-store.ts';

const SessionUser = Type.Object({
  id: Type.Number(),
  email: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
  trust_level: Type.Number(),
});

export function postgresSessionStore(pool: DatabasePool): SessionStore {
  return {
    async create(userId, expiresAt, loggedInAt) {
      const id = randomUUID();
      await pool.query(sql.unsafe`
        insert into sessions (id, user_id, expires_at, logged_in_at)
        values (${id}, ${userId}, ${expiresAt.toISOString()}, ${loggedInAt.toISOString()})`);
      // Expired and revoked sessions are dead weight; trim the user's own while we are here.
      await pool.query(sql.unsafe`
        delete from sessions where user_id = ${userId}
          and (expires_at < now() - interval '1 day' or revoked_at < now() - interval '1 day')`);
      return { id, userId, expiresAt, loggedInAt };
    },
    async loggedInAt(sessionId) {
      const found = await pool.maybeOneFirst(sql.type(row(Type.Object({ at: Type.Number() })))`
        select (extract(epoch from logged_in_at) * 1000)::float8 as at from sessions
        where id = ${sessionId} and revoked_at is null and expires_at > now()`);
      return found === null ? null : new Date(found);
    },
    async findUser(sessionId) {
      const found = await pool.maybeOne(sql.type(row(SessionUser))`
        select u.id, u.email, u.role, u.trust_level
        from sessions s join users u on u.id = s.user_id
        where s.id = ${sessionId} and s.revoked_at is null and s.expires_at > now()`);
      return found ? toStoredUser(found) : null;
    },
    async revoke(sessionId) {
      await pool.query(sql.unsafe`
        update sessions set revoked_at = now() where id = ${sessionId} and revoked_at is null`);
    },
    async revokeAllForUser(userId, keep) {
      const result = await pool.query(sql.unsafe`
        update sessions set revoked_at = now()
        where user_id = ${userId} and revoked_at is null and id is distinct from ${keep ?? null}::uuid`);
      return result.rowCount;
    },
  };
}

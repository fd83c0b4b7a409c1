import { Type } from 'typebox';
import type { TrustLevel } from '../../domain/users.ts';
import type { UserStore } from '../../ports/user-store.ts';
import { type DatabasePool, row, sql } from './database.ts';

const UpsertedUser = Type.Object({
  id: Type.Number(),
  email: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
  trust_level: Type.Number(),
  created: Type.Boolean(),
});

export function postgresUserStore(pool: DatabasePool): UserStore {
  return {
    async upsert(user) {
      const stored = await pool.one(sql.type(row(UpsertedUser))`
        insert into users (email, password_hash, role, trust_level)
        values (${user.email}, ${user.passwordHash}, ${user.role}, ${user.trustLevel})
        on conflict (lower(email)) do update
          set password_hash = excluded.password_hash,
              role = excluded.role,
              trust_level = excluded.trust_level,
              updated_at = now()
        returning id, email, role, trust_level, (xmax = 0) as created`);
      return {
        id: stored.id,
        email: stored.email,
        role: stored.role,
        trustLevel: stored.trust_level as TrustLevel,
        created: stored.created,
      };
    },
  };
}

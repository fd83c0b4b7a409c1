import { Type } from 'typebox';
import type { ActorDirectory } from '../../../ports/accounts/actor-directory.ts';
import { type DatabasePool, row, sql } from '../database.ts';

/** Role and trust level straight from the `users` table. */
export function postgresActorDirectory(pool: DatabasePool): ActorDirectory {
  return {
    async find(userId) {
      const found = await pool.maybeOne(
        sql.type(
          row(
            Type.Object({
              id: Type.Number(),
              role: Type.Union([Type.Literal('admin'), Type.Literal('user')]),
              trust_level: Type.Number(),
            }),
          ),
        )`select id, role, trust_level from users where id = ${userId}`,
      );
      return found ? { id: found.id, role: found.role, trustLevel: found.trust_level } : null;
    },
  };
}

import { Type } from 'typebox';
import type { TrustLevel } from '../../../domain/accounts/users.ts';
import type {
  DeletionSummary,
  StoredUser,
  UserStore,
  UserWithPassword,
} from '../../../ports/accounts/user-store.ts';
import { type DatabasePool, row, sql } from '../database.ts';

const RoleSchema = Type.Union([Type.Literal('admin'), Type.Literal('user')]);

const UpsertedUser = Type.Object({
  id: Type.Number(),
  email: Type.String(),
  role: RoleSchema,
  trust_level: Type.Number(),
  created: Type.Boolean(),
});

const UserRow = Type.Object({
  id: Type.Number(),
  email: Type.String(),
  role: RoleSchema,
  trust_level: Type.Number(),
  password_hash: Type.String(),
});

const SummaryRow = Type.Object({
  catalogs: Type.Number(),
  datasets: Type.Number(),
  events: Type.Number(),
  sessions: Type.Number(),
});

type UserColumns = { id: number; email: string; role: 'admin' | 'user'; trust_level: number };

export function toStoredUser(stored: UserColumns): StoredUser {
  return {
    id: stored.id,
    email: stored.email,
    role: stored.role,
    trustLevel: stored.trust_level as TrustLevel,
  };
}

function toUser(stored: UserColumns & { password_hash: string }): UserWithPassword {
  return { ...toStoredUser(stored), passwordHash: stored.password_hash };
}

export function postgresUserStore(pool: DatabasePool): UserStore {
  const summary = (id: number) =>
    sql.type(row(SummaryRow))`
      select
        (select count(*) from catalogs where created_by = ${id})::int as catalogs,
        (select count(*) from datasets d join catalogs c on c.id = d.catalog_id
          where c.created_by = ${id})::int as datasets,
        (select count(*) from events e join catalogs c on c.id = e.catalog_id
          where c.created_by = ${id})::int as events,
        (select count(*) from sessions where user_id = ${id} and revoked_at is null
          and expires_at > now())::int as sessions`;
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
      return { ...toStoredUser(stored), created: stored.created };
    },
    async createIfAbsent(user) {
      const inserted = await pool.maybeOne(sql.type(row(Type.Object({ id: Type.Number() })))`
        insert into users (email, password_hash, role, trust_level)
        values (${user.email}, ${user.passwordHash}, 'user', ${user.trustLevel})
        on conflict (lower(email)) do nothing
        returning id`);
      return inserted !== null;
    },
    async findByEmail(email) {
      const stored = await pool.maybeOne(sql.type(row(UserRow))`
        select id, email, role, trust_level, password_hash from users where lower(email) = lower(${email})`);
      return stored ? toUser(stored) : null;
    },
    async findById(id) {
      const stored = await pool.maybeOne(sql.type(row(UserRow))`
        select id, email, role, trust_level, password_hash from users where id = ${id}`);
      return stored ? toUser(stored) : null;
    },
    async setPassword(id, passwordHash) {
      await pool.query(sql.unsafe`
        update users set password_hash = ${passwordHash}, updated_at = now() where id = ${id}`);
    },
    async setEmail(id, email) {
      const updated = await pool.maybeOne(sql.type(row(Type.Object({ id: Type.Number() })))`
        update users set email = ${email}, updated_at = now()
        where id = ${id}
          and not exists (select 1 from users other where lower(other.email) = lower(${email}) and other.id <> ${id})
        returning id`);
      return updated !== null;
    },
    async deletionSummary(id): Promise<DeletionSummary> {
      return pool.one(summary(id));
    },
    async delete(id): Promise<DeletionSummary> {
      return pool.transaction(async (tx) => {
        const counted = await tx.one(summary(id));
        // Catalogs cascade to their datasets and events; sessions and quota usage cascade from users.
        await tx.query(sql.unsafe`delete from catalogs where created_by = ${id}`);
        await tx.query(sql.unsafe`delete from users where id = ${id}`);
        return counted;
      });
    },
  };
}

import { randomUUID } from 'node:crypto';
import type { ActorDirectory } from '../../../src/ports/accounts/actor-directory.ts';
import type { SessionStore } from '../../../src/ports/accounts/session-store.ts';
import type {
  DeletionSummary,
  StoredUser,
  UserStore,
  UserWithPassword,
} from '../../../src/ports/accounts/user-store.ts';
import type { Clock } from '../../../src/ports/clock.ts';

type Session = { id: string; userId: number; expiresAt: Date; loggedInAt: Date; revokedAt: Date | null };

export type MemoryAccounts = {
  users: UserStore;
  sessions: SessionStore;
  actors: ActorDirectory;
};

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The accounts' UserStore, SessionStore and ActorDirectory in memory, over one table of users and
 * one of sessions as the Postgres adapters share the `users` and `sessions` tables: a session
 * belongs to a user (deleting the user ends it), emails are unique whatever their case, and a
 * session is live while it is neither revoked nor past its expiry by `clock` (Postgres's now()).
 * They pass the same behaviour suites as the Postgres adapters (test/contracts/accounts/
 * user-store.ts and session-store.ts). The catalogs, datasets and events a deletion removes live in
 * the collections, not here: `owned` says how many a user has (none by default).
 */
export function memoryAccounts(
  clock: Clock = { now: () => new Date() },
  owned: (userId: number) => Omit<DeletionSummary, 'sessions'> = () => ({
    catalogs: 0,
    datasets: 0,
    events: 0,
  }),
): MemoryAccounts {
  const users = new Map<number, UserWithPassword>();
  const sessions = new Map<string, Session>();
  let lastId = 0;

  const byEmail = (email: string) =>
    [...users.values()].find((user) => user.email.toLowerCase() === email.toLowerCase());
  const copy = (user: UserWithPassword): UserWithPassword => ({ ...user });
  const stored = ({ id, email, role, trustLevel }: StoredUser): StoredUser => ({
    id,
    email,
    role,
    trustLevel,
  });
  const live = (session: Session | undefined): session is Session =>
    session !== undefined &&
    session.revokedAt === null &&
    session.expiresAt.getTime() > clock.now().getTime() &&
    users.has(session.userId);
  const summary = (id: number): DeletionSummary => ({
    ...owned(id),
    sessions: [...sessions.values()].filter((s) => s.userId === id && live(s)).length,
  });

  const userStore: UserStore = {
    async upsert(user) {
      const existing = byEmail(user.email);
      if (existing) {
        // The stored spelling of the address stays; the rest is replaced.
        Object.assign(existing, {
          passwordHash: user.passwordHash,
          role: user.role,
          trustLevel: user.trustLevel,
        });
        return { ...stored(existing), created: false };
      }
      const id = ++lastId;
      users.set(id, { id, ...user });
      return { id, email: user.email, role: user.role, trustLevel: user.trustLevel, created: true };
    },
    async createIfAbsent(user) {
      if (byEmail(user.email)) return false;
      const id = ++lastId;
      users.set(id, {
        id,
        email: user.email,
        passwordHash: user.passwordHash,
        role: 'user',
        trustLevel: user.trustLevel,
      });
      return true;
    },
    async findByEmail(email) {
      const user = byEmail(email);
      return user ? copy(user) : null;
    },
    async findById(id) {
      const user = users.get(id);
      return user ? copy(user) : null;
    },
    async setPassword(id, passwordHash) {
      const user = users.get(id);
      if (user) user.passwordHash = passwordHash;
    },
    async setEmail(id, email) {
      const other = byEmail(email);
      const user = users.get(id);
      if (!user || (other && other.id !== id)) return false;
      user.email = email;
      return true;
    },
    async deletionSummary(id) {
      return summary(id);
    },
    async delete(id) {
      const counted = summary(id);
      users.delete(id);
      for (const [sessionId, session] of sessions) if (session.userId === id) sessions.delete(sessionId);
      return counted;
    },
  };

  const sessionStore: SessionStore = {
    async create(userId, expiresAt, loggedInAt) {
      if (!users.has(userId)) throw new Error(`no user ${userId}: a session belongs to an account`);
      const id = randomUUID();
      sessions.set(id, { id, userId, expiresAt, loggedInAt, revokedAt: null });
      // As the Postgres store does: the user's sessions dead for over a day are trimmed.
      const dayAgo = clock.now().getTime() - DAY_MS;
      for (const [otherId, s] of sessions) {
        const deadSince = Math.min(s.expiresAt.getTime(), s.revokedAt?.getTime() ?? Infinity);
        if (s.userId === userId && deadSince < dayAgo) sessions.delete(otherId);
      }
      return { id, userId, expiresAt, loggedInAt };
    },
    async loggedInAt(sessionId) {
      const session = sessions.get(sessionId);
      return live(session) ? new Date(session.loggedInAt) : null;
    },
    async findUser(sessionId) {
      const session = sessions.get(sessionId);
      const user = live(session) ? users.get(session.userId) : undefined;
      return user ? stored(user) : null;
    },
    async revoke(sessionId) {
      const session = sessions.get(sessionId);
      if (session && session.revokedAt === null) session.revokedAt = clock.now();
    },
    async revokeAllForUser(userId, keep) {
      let revoked = 0;
      for (const session of sessions.values()) {
        if (session.userId !== userId || session.revokedAt !== null || session.id === keep) continue;
        session.revokedAt = clock.now();
        revoked += 1;
      }
      return revoked;
    },
  };

  const actors: ActorDirectory = {
    async find(userId) {
      const user = users.get(userId);
      return user ? { id: user.id, role: user.role, trustLevel: user.trustLevel } : null;
    },
  };

  return { users: userStore, sessions: sessionStore, actors };
}

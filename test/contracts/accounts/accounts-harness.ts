import { randomUUID } from 'node:crypto';
import type { ActorDirectory } from '../../../src/ports/accounts/actor-directory.ts';
import type { SessionStore } from '../../../src/ports/accounts/session-store.ts';
import type { UserStore } from '../../../src/ports/accounts/user-store.ts';

// What the user-store and session-store suites are given: the three ports that read the one table
// of accounts, over the same storage (a session is a user's; an actor is a user as the scraper
// rules see them).

export type AccountsUnderTest = { users: UserStore; sessions: SessionStore; actors: ActorDirectory };

/** A fresh set of ports; accounts of one call may share storage with another's (emails differ). */
export type MakeAccounts = () => Promise<AccountsUnderTest>;

/** An address no other case of the suite uses, so that the suites can share one database. */
export const freshEmail = (name: string): string => `${name}-${randomUUID().slice(0, 8)}@example.org`;

const HOUR_MS = 60 * 60 * 1000;
/** An hour from now (live) or ago (expired): far enough that no run is slow enough to matter. */
export const hoursFromNow = (hours: number): Date => new Date(Date.now() + hours * HOUR_MS);

/** A basic user, created through the store: its id. */
export async function addUser(users: UserStore, name = 'user'): Promise<{ id: number; email: string }> {
  const email = freshEmail(name);
  const user = await users.upsert({ email, passwordHash: 'hash-1', role: 'user', trustLevel: 1 });
  return { id: user.id, email };
}

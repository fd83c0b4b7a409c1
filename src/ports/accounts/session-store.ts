import type { StoredUser } from './user-store.ts';

type Session = { id: string; userId: number; expiresAt: Date; loggedInAt: Date };

/** Server-side record of issued tokens, so that tokens can be revoked before they expire. */
export interface SessionStore {
  /** `loggedInAt`: when the login this session continues happened (a refresh keeps it). */
  create(userId: number, expiresAt: Date, loggedInAt: Date): Promise<Session>;
  /** When the login of a live session happened, else null. */
  loggedInAt(sessionId: string): Promise<Date | null>;
  /** The user of a live session (not revoked, not expired, user not deleted), else null. */
  findUser(sessionId: string): Promise<StoredUser | null>;
  revoke(sessionId: string): Promise<void>;
  /** Revokes every session of the user except `keep`; returns how many were revoked. */
  revokeAllForUser(userId: number, keep?: string): Promise<number>;
}

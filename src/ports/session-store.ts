import type { StoredUser } from './user-store.ts';

export type Session = { id: string; userId: number; expiresAt: Date };

/** Server-side record of issued tokens, so that tokens can be revoked before they expire. */
export interface SessionStore {
  create(userId: number, expiresAt: Date): Promise<Session>;
  /** The user of a live session (not revoked, not expired, user not deleted), else null. */
  findUser(sessionId: string): Promise<StoredUser | null>;
  revoke(sessionId: string): Promise<void>;
  /** Revokes every session of the user except `keep`; returns how many were revoked. */
  revokeAllForUser(userId: number, keep?: string): Promise<number>;
}

import type { Role, TrustLevel } from '../../domain/accounts/users.ts';

export type StoredUser = { id: number; email: string; role: Role; trustLevel: TrustLevel };

export type UserWithPassword = StoredUser & { passwordHash: string };

/** What deleting an account removes, shown to the user before they confirm. */
export type DeletionSummary = { catalogs: number; datasets: number; events: number; sessions: number };

export interface UserStore {
  /** Creates the user, or updates the password, role and trust level of the user with that email. */
  upsert(user: {
    email: string;
    passwordHash: string;
    role: Role;
    trustLevel: TrustLevel;
  }): Promise<StoredUser & { created: boolean }>;
  /** Creates the user unless the email is taken; the same single statement either way. */
  createIfAbsent(user: { email: string; passwordHash: string; trustLevel: TrustLevel }): Promise<boolean>;
  findByEmail(email: string): Promise<UserWithPassword | null>;
  findById(id: number): Promise<UserWithPassword | null>;
  setPassword(id: number, passwordHash: string): Promise<void>;
  /** Returns false when another account already has the email. */
  setEmail(id: number, email: string): Promise<boolean>;
  deletionSummary(id: number): Promise<DeletionSummary>;
  /** Deletes the user with the catalogs they own (and everything below them) and their sessions. */
  delete(id: number): Promise<DeletionSummary>;
}

import type { Role, TrustLevel } from '../domain/users.ts';

export type StoredUser = { id: number; email: string; role: Role; trustLevel: TrustLevel };

export interface UserStore {
  /** Creates the user, or updates the password, role and trust level of the user with that email. */
  upsert(user: {
    email: string;
    passwordHash: string;
    role: Role;
    trustLevel: TrustLevel;
  }): Promise<StoredUser & { created: boolean }>;
}

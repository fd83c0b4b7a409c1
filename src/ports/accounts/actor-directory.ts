import type { Actor } from '../../domain/scrapers/access.ts';

/** Who a user is for the scraper access rules (role and trust level), read where the accounts live. */
export interface ActorDirectory {
  /** The user's role and trust level, or null when the user does not exist. */
  find(userId: number): Promise<Actor | null>;
}

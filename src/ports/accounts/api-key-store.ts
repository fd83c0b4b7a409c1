import type { ApiKey, NewApiKey } from '../../domain/accounts/api-keys.ts';
import type { StoredUser } from './user-store.ts';

/** API keys, kept hashed (migration 0840). */
export interface ApiKeyStore {
  /** A new key with its secret's hash and the 4 characters of it that the list shows. */
  create(userId: number, key: NewApiKey, secretHash: Buffer, hint: string): Promise<ApiKey>;
  /** The user's live keys, newest first. */
  list(userId: number): Promise<ApiKey[]>;
  countLive(userId: number): Promise<number>;
  /** Revokes the user's key; false when it is not theirs, unknown or already revoked. */
  revoke(userId: number, id: number): Promise<boolean>;
  /** The ids among `catalogIds` that the user owns. */
  ownedCatalogs(userId: number, catalogIds: number[]): Promise<number[]>;
  /** The user's catalogs (id and title, by title; at most `limit`), for the key form's choice. */
  catalogChoices(userId: number, limit: number): Promise<Array<{ id: number; title: string }>>;
  /** A live key (not revoked, owner not deleted) with its hash and owner, for authentication. */
  findLive(id: number): Promise<{ key: ApiKey; secretHash: Buffer; owner: StoredUser } | null>;
  /** Records a use; the store writes only when the last one recorded is older than a minute. */
  touch(id: number, at: Date): Promise<void>;
}

/** Secrets of API keys: random generation and the hash that is stored (adapters/security). */
export interface ApiKeySecrets {
  /** A new random part (43 base64url characters, 256 bits). */
  random(): string;
  hash(random: string): Buffer;
  /** Constant-time comparison of a presented random part with a stored hash. */
  matches(random: string, stored: Buffer): boolean;
}

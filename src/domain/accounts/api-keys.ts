import { ValidationError } from '../errors.ts';

// API keys (issue 38 §3, design §11): a programmatic credential that acts as its owner, limited by
// its scope and the catalogs it covers. The secret is `cmk_<id>_<random>`: the id finds the row in
// one indexed lookup, the random part (32 bytes, base64url) is what is checked against the stored
// hash. Keys never carry admin powers and never reach key or account management (keyMayCall).

type ApiKeyScope = 'read' | 'write';

/** What a key allows, carried on the Viewer of a key-authenticated request (domain/access.ts). */
export type ApiKeyGrant = { id: number; scope: ApiKeyScope; catalogIds: number[] | null };

export type ApiKey = ApiKeyGrant & {
  name: string;
  /** The part of the secret that may be shown again: `cmk_<id>_<first 4 random characters>`. */
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
};

const API_KEY_PREFIX = 'cmk_';
/** Live keys per user: enough for every script and machine, bounded against a runaway client. */
export const MAX_KEYS_PER_USER = 50;
export const MAX_KEY_CATALOGS = 100;
/** last_used_at is recorded at most this often per key: not a database write per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const SECRET_SHAPE = /^cmk_([1-9]\d{0,15})_([A-Za-z0-9_-]{43})$/;

/** The id and random part of a secret of the right shape, else null (then it is not a key). */
export function parseApiKeySecret(secret: string): { id: number; random: string } | null {
  const match = SECRET_SHAPE.exec(secret);
  if (!match?.[1] || !match[2]) return null;
  const id = Number(match[1]);
  return Number.isSafeInteger(id) ? { id, random: match[2] } : null;
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}

export const formatApiKeySecret = (id: number, random: string) => `${API_KEY_PREFIX}${id}_${random}`;
export const apiKeyPrefix = (id: number, hint: string) => `${API_KEY_PREFIX}${id}_${hint}`;

export type NewApiKey = { name: string; scope: ApiKeyScope; catalogIds: number[] | null };

/** A new key's settings, checked: a name, a scope, and either every catalog or a short list. */
export function checkNewApiKey(input: {
  name: string;
  scope: string;
  catalogs?: number[] | 'all';
}): NewApiKey {
  const name = input.name.trim();
  if (name.length < 1 || name.length > 100)
    throw new ValidationError('name must be 1 to 100 characters', { field: 'name' });
  if (input.scope !== 'read' && input.scope !== 'write')
    throw new ValidationError("scope must be 'read' or 'write'", { field: 'scope' });
  const catalogs = input.catalogs ?? 'all';
  if (catalogs === 'all') return { name, scope: input.scope, catalogIds: null };
  const unique = [...new Set(catalogs)];
  if (unique.length < 1 || unique.length > MAX_KEY_CATALOGS)
    throw new ValidationError(`catalogs must be 'all' or a list of 1 to ${MAX_KEY_CATALOGS} catalog ids`, {
      field: 'catalogs',
    });
  return { name, scope: input.scope, catalogIds: unique.sort((a, b) => a - b) };
}

/**
 * What a request made with a key is, for keyMayCall: account management (keys, the account, its
 * sessions and personal-data exports, the HTML account and dashboard pages), a read (GET/HEAD), or
 * a write (every other method).
 */
export type KeyRouteClass = 'account' | 'read' | 'write';

const ACCOUNT_ROUTES = /^\/(?:api\/(?:users|api-keys|auth|data-exports)|account|dashboard)(?:[/?]|$)/;

export function keyRouteClass(method: string, url: string): KeyRouteClass {
  if (ACCOUNT_ROUTES.test(url)) return 'account';
  return method === 'GET' || method === 'HEAD' ? 'read' : 'write';
}

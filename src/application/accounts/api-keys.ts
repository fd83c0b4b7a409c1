import { keyMayCall, requireViewer, type Viewer } from '../../domain/access.ts';
import {
  type ApiKey,
  checkNewApiKey,
  formatApiKeySecret,
  keyRouteClass,
  LAST_USED_RESOLUTION_MS,
  MAX_KEYS_PER_USER,
  parseApiKeySecret,
} from '../../domain/accounts/api-keys.ts';
import { DomainError, NotFoundError, ValidationError } from '../../domain/errors.ts';
import type { ApiKeySecrets, ApiKeyStore } from '../../ports/accounts/api-key-store.ts';
import type { Clock } from '../../ports/clock.ts';

// API keys (issue 38 §3): created, listed and revoked by their owner with a session; accepted as
// `Authorization: Bearer cmk_…` by the authentication hook, which asks authenticateApiKey who is
// calling and authorizeKeyRequest whether a key may call the route at all.

export type ApiKeyDeps = {
  keys: ApiKeyStore;
  secrets: ApiKeySecrets;
  clock: Clock;
  /** When this process last recorded each key's use (ms): at most one write a minute per key. */
  recentUse: Map<number, number>;
};

/** More catalogs than the form lists are given by id (the form's text field, the API). */
const MAX_CATALOG_CHOICES = 200;

/** Key management needs a session: a key cannot create, list or revoke keys. */
function sessionUser(viewer: Viewer): Exclude<Viewer, null> {
  const user = requireViewer(viewer);
  const refusal = user.key ? keyMayCall(user.key, 'account') : null;
  if (refusal) throw refusal;
  return user;
}

/** POST /api/api-keys: the key and its secret, which is never shown again. */
export async function createApiKey(
  deps: ApiKeyDeps,
  viewer: Viewer,
  input: { name: string; scope: string; catalogs?: number[] | 'all' },
): Promise<{ key: ApiKey; secret: string }> {
  const user = sessionUser(viewer);
  const wanted = checkNewApiKey(input);
  if (wanted.catalogIds) {
    const owned = new Set(await deps.keys.ownedCatalogs(user.id, wanted.catalogIds));
    const other = wanted.catalogIds.find((id) => !owned.has(id));
    // Someone else's catalog and a missing one read alike: a key covers only the caller's own.
    if (other !== undefined)
      throw new ValidationError(`catalog ${other} is not a catalog of yours`, { field: 'catalogs' });
  }
  if ((await deps.keys.countLive(user.id)) >= MAX_KEYS_PER_USER)
    throw new DomainError('conflict', `At most ${MAX_KEYS_PER_USER} live API keys; revoke one first`, {
      code: 'API_KEY_LIMIT',
    });
  const random = deps.secrets.random();
  const key = await deps.keys.create(user.id, wanted, deps.secrets.hash(random), random.slice(0, 4));
  return { key, secret: formatApiKeySecret(key.id, random) };
}

export async function listApiKeys(deps: ApiKeyDeps, viewer: Viewer): Promise<ApiKey[]> {
  return deps.keys.list(sessionUser(viewer).id);
}

/** The catalogs a new key may be limited to (the caller's own), for the key form. */
export async function apiKeyCatalogChoices(
  deps: ApiKeyDeps,
  viewer: Viewer,
): Promise<Array<{ id: number; title: string }>> {
  return deps.keys.catalogChoices(sessionUser(viewer).id, MAX_CATALOG_CHOICES);
}

/** DELETE /api/api-keys/{id}: someone else's key, or one already revoked, is a 404. */
export async function revokeApiKey(deps: ApiKeyDeps, viewer: Viewer, id: number): Promise<void> {
  const user = sessionUser(viewer);
  if (!(await deps.keys.revoke(user.id, id)))
    throw new NotFoundError(`API key ${id} does not exist`, { code: 'API_KEY_NOT_FOUND' });
  deps.recentUse.delete(id);
}

/**
 * Who calls with this key: its owner, limited by the key. A key never carries admin powers, so an
 * admin's key acts as a user (with the admin's trust level). Unknown, revoked or wrong: null.
 */
export async function authenticateApiKey(deps: ApiKeyDeps, secret: string): Promise<Viewer> {
  const parsed = parseApiKeySecret(secret);
  if (!parsed) return null;
  const found = await deps.keys.findLive(parsed.id);
  if (!found || !deps.secrets.matches(parsed.random, found.secretHash)) return null;
  await recordUse(deps, parsed.id);
  const { owner, key } = found;
  return {
    id: owner.id,
    email: owner.email,
    role: 'user',
    trustLevel: owner.trustLevel,
    key: { id: key.id, scope: key.scope, catalogIds: key.catalogIds },
  };
}

async function recordUse(deps: ApiKeyDeps, id: number): Promise<void> {
  const now = deps.clock.now();
  const last = deps.recentUse.get(id);
  if (last !== undefined && now.getTime() - last < LAST_USED_RESOLUTION_MS) return;
  deps.recentUse.set(id, now.getTime());
  await deps.keys.touch(id, now);
}

/** Whether the key of a key-authenticated request may call this route at all (403 when not). */
export function authorizeKeyRequest(viewer: Viewer, method: string, url: string): void {
  if (!viewer?.key) return;
  const refusal = keyMayCall(viewer.key, keyRouteClass(method, url));
  if (refusal) throw refusal;
}

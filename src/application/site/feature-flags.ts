import { requireAdmin, type Viewer } from '../../domain/access.ts';
import {
  type FeatureFlagName,
  type FeatureFlags,
  parseFlagChanges,
  withDefaults,
} from '../../domain/site/feature-flags.ts';
import type { FeatureFlagStore } from '../../ports/site/feature-flag-store.ts';

// Feature flags as everyone reads them (stored values over defaults) and as admins change them.

export async function readFeatureFlags(store: FeatureFlagStore): Promise<FeatureFlags> {
  return withDefaults(await store.read());
}

/** For other areas, e.g. the scraper-repo create rule: `await isFeatureEnabled(flags, 'enableScrapers')`. */
export async function isFeatureEnabled(store: FeatureFlagStore, name: FeatureFlagName): Promise<boolean> {
  return (await readFeatureFlags(store))[name];
}

export async function changeFeatureFlags(
  store: FeatureFlagStore,
  viewer: Viewer,
  changes: Record<string, unknown>,
): Promise<FeatureFlags> {
  const admin = requireAdmin(viewer);
  await store.write(parseFlagChanges(changes), admin.id);
  return readFeatureFlags(store);
}

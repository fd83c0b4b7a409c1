import { ValidationError } from '../errors.ts';

// Feature flags and their defaults. Scrapers run user code, so they stay off until an admin
// switches them on.

export const FEATURE_FLAGS = {
  enableScrapers: {
    default: false,
    description: 'Users of trust level 3 and above may create and run scrapers',
  },
  enableRegistration: { default: true, description: 'Anyone may create an account at /api/auth/register' },
} as const;

export type FeatureFlagName = keyof typeof FEATURE_FLAGS;
export type FeatureFlags = Record<FeatureFlagName, boolean>;

export const FEATURE_FLAG_NAMES = Object.keys(FEATURE_FLAGS) as FeatureFlagName[];

export function withDefaults(stored: Partial<Record<FeatureFlagName, boolean>>): FeatureFlags {
  return Object.fromEntries(
    FEATURE_FLAG_NAMES.map((name) => [name, stored[name] ?? FEATURE_FLAGS[name].default]),
  ) as FeatureFlags;
}

export function parseFlagChanges(input: Record<string, unknown>): Partial<FeatureFlags> {
  const changes: Partial<FeatureFlags> = {};
  for (const [name, value] of Object.entries(input)) {
    if (!FEATURE_FLAG_NAMES.includes(name as FeatureFlagName)) {
      throw new ValidationError(`unknown feature flag "${name}"`, {
        field: name,
        code: 'UNKNOWN_FEATURE_FLAG',
      });
    }
    if (typeof value !== 'boolean')
      throw new ValidationError(`"${name}" must be true or false`, { field: name });
    changes[name as FeatureFlagName] = value;
  }
  return changes;
}

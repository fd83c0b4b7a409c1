import { Type } from 'typebox';
import { FEATURE_FLAG_NAMES, FEATURE_FLAGS } from '../../../domain/site/feature-flags.ts';

// The schemas of the feature flags (feature-flag-routes.ts): the flags, registered as `FeatureFlags`,
// and a change of some of them.

const Flags = Type.Object(
  Object.fromEntries(
    FEATURE_FLAG_NAMES.map((name) => [
      name,
      Type.Boolean({
        description: `${FEATURE_FLAGS[name].description} (default ${FEATURE_FLAGS[name].default})`,
      }),
    ]),
  ),
  { $id: 'FeatureFlags' },
);

export const featureFlagSchemas = [Flags];

export const FlagChanges = Type.Partial(
  Type.Object(Object.fromEntries(FEATURE_FLAG_NAMES.map((name) => [name, Type.Boolean()]))),
  { additionalProperties: false, minProperties: 1 },
);

import type { FeatureFlagName } from '../../domain/site/feature-flags.ts';

export interface FeatureFlagStore {
  /** Stored values only; defaults are applied by the domain. */
  read(): Promise<Partial<Record<FeatureFlagName, boolean>>>;
  write(values: Partial<Record<FeatureFlagName, boolean>>, by: number): Promise<void>;
}

/** The one question the scraper use cases ask of the flags: is this feature switched on now? */
export interface FeatureFlagCheck {
  isEnabled(flag: 'enableScrapers'): Promise<boolean>;
}

// Site-wide settings an admin keeps (migration 0720_site_settings.sql): one JSON document per key.

type SiteSettingKey = 'legal-notices' | 'newsletter';

export interface SiteSettings {
  read(key: SiteSettingKey): Promise<Record<string, unknown> | null>;
  write(key: SiteSettingKey, value: Record<string, unknown>, by: number): Promise<void>;
}

/** Sends a subscription to the newsletter service an admin configured. */
export interface NewsletterService {
  /** Resolves when the service accepted it (2xx); throws a failure with a code otherwise. */
  subscribe(serviceUrl: string, email: string): Promise<void>;
}

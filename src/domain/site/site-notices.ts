import { ValidationError } from '../errors.ts';

// The site's legal notices (shown on the registration pages), the newsletter service, and the one
// rule for redirects the service makes to a path a caller names: only paths of this site.

export type LegalNotices = {
  termsUrl: string | null;
  privacyUrl: string | null;
  registrationDisclaimer: string | null;
  contactEmail: string | null;
};

/** An http(s) URL a person's browser opens (terms, privacy), or null. */
export function publicUrl(value: string | null, field: string): string | null {
  if (value === null || value === '') return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ValidationError(`${field} must be an http(s) URL`, { field, code: 'INVALID_URL' });
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new ValidationError(`${field} must be an http(s) URL without credentials`, {
      field,
      code: 'INVALID_URL',
    });
  }
  return url.toString();
}

/** The stored notices with a change applied; every field checked. */
export function changedNotices(current: LegalNotices, change: Partial<LegalNotices>): LegalNotices {
  const next = { ...current, ...change };
  return {
    termsUrl: publicUrl(next.termsUrl, 'termsUrl'),
    privacyUrl: publicUrl(next.privacyUrl, 'privacyUrl'),
    registrationDisclaimer: next.registrationDisclaimer || null,
    contactEmail: next.contactEmail || null,
  };
}

/** Stored JSON read back as notices (unknown keys and wrong types are ignored). */
export function noticesFrom(stored: Record<string, unknown> | null): LegalNotices {
  const text = (key: keyof LegalNotices) =>
    typeof stored?.[key] === 'string' ? (stored[key] as string) : null;
  return {
    termsUrl: text('termsUrl'),
    privacyUrl: text('privacyUrl'),
    registrationDisclaimer: text('registrationDisclaimer'),
    contactEmail: text('contactEmail'),
  };
}

/**
 * A path of this site to redirect to: it starts with one `/` and stays on this origin. `//host`,
 * `/\\host` (browsers read a backslash as a slash), schemes (`javascript:`, `data:`, `https:`),
 * control characters and anything that resolves elsewhere are refused.
 */
export function localPath(raw: string): string {
  const refuse = (): never => {
    throw new ValidationError('the redirect must be a path of this site, like /explore', {
      field: 'path',
      code: 'UNSAFE_REDIRECT',
    });
  };
  const control = [...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (!raw.startsWith('/') || raw.startsWith('//') || raw.includes('\\') || control) {
    return refuse();
  }
  const base = 'http://local.invalid';
  let resolved: URL;
  try {
    resolved = new URL(raw, base);
  } catch {
    return refuse();
  }
  if (resolved.origin !== base) return refuse();
  return `${resolved.pathname}${resolved.search}`;
}

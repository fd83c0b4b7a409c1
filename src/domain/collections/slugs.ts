import { ValidationError } from '../errors.ts';

// The slug of a catalog or dataset: how the read API (`catalog`, `datasets`), the OGC collection
// ids, the collections API and the dashboard's forms name one. One rule, read by every parser.
//
// The spec's only slug rule (§Manifest: "lowercase letters, digits, hyphens only; max 128") is
// written for scrapers; catalogs and datasets have kept the stricter form since migration 0001's
// check (no leading, trailing or doubled hyphen), which is inside the spec's rule and is what the
// database holds. Its length is the spec's 128.

export const SLUG_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const MAX_SLUG_LENGTH = 128;

/** True for a catalog or dataset slug: the pattern, at most MAX_SLUG_LENGTH characters. */
export function isSlug(value: string): boolean {
  return value.length <= MAX_SLUG_LENGTH && SLUG_PATTERN.test(value);
}

/** A slug a caller sent for `field`, refused (400) unless it is one. */
export function parseSlug(value: string, field: string): string {
  if (!isSlug(value)) {
    throw new ValidationError(
      `${field} must be lower-case letters and digits in words joined by single hyphens, at most ${MAX_SLUG_LENGTH} characters (got "${value.slice(0, 40)}")`,
      { field, code: 'INVALID_PARAMETER' },
    );
  }
  return value;
}

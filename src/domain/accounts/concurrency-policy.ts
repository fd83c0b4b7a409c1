import { ValidationError } from '../errors.ts';
import type { TrustLevel } from './users.ts';

// The places of costly requests as config/quotas.yaml states them (`concurrentRequests`): per
// client and for the low-trust share, by class. What they mean: concurrency.ts.

const CONCURRENCY_CLASSES = ['collections', 'reads', 'exports'] as const;
export type ConcurrencyClass = (typeof CONCURRENCY_CLASSES)[number];

/** A number of places; null: unlimited. */
type Places = number | null;

/** The places of one class. */
type ClassLimits = { perAddress: Places; perAccount: Places; lowTrustShare: Places };

export type ConcurrencyPolicy = {
  /** Accounts of this trust level and below count in the low-trust share with anonymous callers; null: none. */
  lowTrustLevel: TrustLevel | null;
  classes: Record<ConcurrencyClass, ClassLimits>;
};

const LIMIT_KEYS = ['perAddress', 'perAccount', 'lowTrustShare'] as const;

function mapping(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ValidationError(`${where} must be a mapping`);
  return value as Record<string, unknown>;
}

function places(value: unknown, where: string): Places {
  if (value === 'unlimited') return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1)
    throw new ValidationError(
      `${where} must be a whole number >= 1 or unlimited (got ${JSON.stringify(value)})`,
    );
  return value;
}

/** Checks `concurrentRequests` and names the first offending key. */
export function parseConcurrencyPolicy(input: unknown): ConcurrencyPolicy {
  const where = 'concurrentRequests';
  const raw = mapping(input, where);
  const level = raw.lowTrustLevel;
  if (level !== 'none' && !(typeof level === 'number' && Number.isInteger(level) && level >= 0 && level <= 4))
    throw new ValidationError(`${where}.lowTrustLevel must be a trust level from 0 to 4, or none`);
  const unknown = Object.keys(raw).filter(
    (key) => key !== 'lowTrustLevel' && !(CONCURRENCY_CLASSES as readonly string[]).includes(key),
  );
  if (unknown.length > 0) throw new ValidationError(`${where}: unknown key ${unknown.join(', ')}`);
  const classes = {} as Record<ConcurrencyClass, ClassLimits>;
  for (const kind of CONCURRENCY_CLASSES) {
    const spec = mapping(raw[kind], `${where}.${kind}`);
    const extra = Object.keys(spec).filter((key) => !(LIMIT_KEYS as readonly string[]).includes(key));
    if (extra.length > 0) throw new ValidationError(`${where}.${kind}: unknown key ${extra.join(', ')}`);
    classes[kind] = {
      perAddress: places(spec.perAddress, `${where}.${kind}.perAddress`),
      perAccount: places(spec.perAccount, `${where}.${kind}.perAccount`),
      lowTrustShare: places(spec.lowTrustShare, `${where}.${kind}.lowTrustShare`),
    };
  }
  return { lowTrustLevel: level === 'none' ? null : (level as TrustLevel), classes };
}

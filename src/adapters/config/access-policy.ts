import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ValidationError } from '../../domain/errors.ts';
import { FORBIDDEN_KEYS } from '../../domain/forbidden-keys.ts';
import { type AccessPolicy, parseAccessPolicy } from '../../domain/accounts/quotas.ts';
import { ConfigError, projectRoot } from './environment.ts';

// The quotas file (QUOTAS_CONFIG) is written once by an operator and then outlives upgrades, often
// shared by several hosts. So an operator's file is read as changes to the shipped defaults
// (config/quotas.yaml of this version): a key the file does not name keeps the shipped value, which
// is how a key added in a later version gets its default; a key renamed since is read under its new
// name; anything else the file gets wrong stops the start-up with one line naming the key.

export const SHIPPED_QUOTAS_FILE = path.join(projectRoot, 'config', 'quotas.yaml');

type Mapping = Record<string, unknown>;

/** Keys renamed between versions: the old dotted path, the new one, and why (logged once). */
const RENAMED_KEYS: { from: string[]; to: string[]; note: string }[] = [
  {
    from: ['loginAttempts', 'perEmail'],
    to: ['loginAttempts', 'perIpAndEmail'],
    note: 'login attempts are now counted per client IP and email together, so nobody can lock an owner out',
  },
];

const isMapping = (value: unknown): value is Mapping =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** Moves each renamed key to its new name, unless the file already names the new one. */
function renameOldKeys(file: Mapping, warn: (line: string) => void): Mapping {
  const copy = structuredClone(file);
  for (const { from, to, note } of RENAMED_KEYS) {
    const parentOf = (keys: string[]) =>
      keys.slice(0, -1).reduce<unknown>((at, key) => (isMapping(at) ? at[key] : undefined), copy);
    const oldParent = parentOf(from);
    const oldKey = from.at(-1) as string;
    if (!isMapping(oldParent) || !(oldKey in oldParent)) continue;
    const newParent = parentOf(to);
    const newKey = to.at(-1) as string;
    if (isMapping(newParent) && !(newKey in newParent)) {
      newParent[newKey] = oldParent[oldKey];
      warn(`${from.join('.')} is read as ${to.join('.')} (${note}); rename it in the quotas file`);
    }
    delete oldParent[oldKey];
  }
  return copy;
}

/** The rate windows a limit may have: a set of them is one value (an omitted window is no window). */
const RATE_WINDOWS = new Set(['burst', 'hourly', 'daily']);
const isWindowSet = (value: Mapping) => Object.keys(value).every((key) => RATE_WINDOWS.has(key));

/**
 * The shipped defaults with the operator's values laid over them: mappings merge key by key, any
 * other value replaces the default whole, and so does a set of rate windows (a file that limits
 * anonymous callers by `burst` alone means no hourly or daily window, not the shipped ones). A key
 * the defaults do not have is refused by name, so a typo is not silently ignored.
 */
export function overlay(defaults: Mapping, changes: Mapping, where: string[] = []): Mapping {
  const merged: Mapping = { ...defaults };
  for (const [key, value] of Object.entries(changes)) {
    const at = [...where, key];
    if (FORBIDDEN_KEYS.has(key) || !Object.hasOwn(defaults, key)) {
      throw new ValidationError(
        `${at.join('.')}: unknown key (the shipped config/quotas.yaml lists every key)`,
      );
    }
    const base = defaults[key];
    merged[key] =
      isMapping(base) && isMapping(value) && !isWindowSet(base) ? overlay(base, value, at) : value;
  }
  return merged;
}

const readYaml = (file: string): unknown => parse(readFileSync(file, 'utf8'));

const problem = (message: string) => new ConfigError([{ variable: 'QUOTAS_CONFIG', problem: message }]);

/** Reads the quotas file over the shipped defaults; a bad file stops the start-up with one line. */
export function loadAccessPolicy(
  file: string,
  warn: (line: string) => void = (line) => process.stderr.write(`chronomap: ${file}: ${line}\n`),
  shippedFile: string = SHIPPED_QUOTAS_FILE,
): AccessPolicy {
  let defaults: unknown;
  let changes: unknown;
  try {
    defaults = readYaml(shippedFile);
  } catch (error) {
    throw problem(`cannot read the shipped defaults ${shippedFile}: ${(error as Error).message}`);
  }
  try {
    changes = file === shippedFile ? {} : (readYaml(file) ?? {});
  } catch (error) {
    throw problem(`cannot read ${file}: ${(error as Error).message.split('\n')[0]}`);
  }
  try {
    if (!isMapping(defaults)) throw new ValidationError(`${shippedFile} must be a mapping`);
    if (!isMapping(changes)) throw new ValidationError('the file must be a mapping of keys');
    return parseAccessPolicy(overlay(defaults, renameOldKeys(changes, warn)));
  } catch (error) {
    if (error instanceof ValidationError) throw problem(`${file}: ${error.message}`);
    throw error;
  }
}

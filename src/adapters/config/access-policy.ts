import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ValidationError } from '../../domain/errors.ts';
import { type AccessPolicy, parseAccessPolicy } from '../../domain/accounts/quotas.ts';

/** Reads and checks the quotas file; a bad file stops the start-up with the file and key named. */
export function loadAccessPolicy(file: string): AccessPolicy {
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the quotas file ${file}: ${(error as Error).message}`);
  }
  try {
    return parseAccessPolicy(raw);
  } catch (error) {
    if (error instanceof ValidationError) throw new Error(`${file}: ${error.message}`);
    throw error;
  }
}

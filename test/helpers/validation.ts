import type { Test } from 'tap';
import { ValidationError } from '../../src/domain/errors.ts';

/** Asserts that `run` throws the 400 of a parameter parser: a ValidationError naming `parameter`. */
export function rejected(t: Test, run: () => unknown, parameter: string, message?: RegExp): void {
  try {
    run();
    t.fail(`expected a 400 naming ${parameter}`);
  } catch (error) {
    t.ok(error instanceof ValidationError, 'a ValidationError');
    t.equal((error as ValidationError).field, parameter);
    t.equal((error as ValidationError).code, 'INVALID_PARAMETER');
    if (message) t.match((error as ValidationError).message, message);
  }
}

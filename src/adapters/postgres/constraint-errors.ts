import { DomainError } from '../../domain/errors.ts';
import { sqlState } from './sql-state.ts';

// Shared by the stores whose writes a caller's input can break (the collections API, scraper repos).

/** Constraint violations are the caller's fault: a taken slug is a 409, a bad value a 400. */
export async function mapConstraintErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const code = sqlState(error);
    const detail = (error as { cause?: { detail?: string } }).cause?.detail;
    if (code === '23505')
      throw new DomainError('conflict', 'A document with this value already exists', {
        code: 'DUPLICATE',
        ...(detail ? { details: detail } : {}),
      });
    if (code === '23514' || code === '22P02' || code === '23502')
      throw new DomainError('validation', 'A value is not allowed here', {
        code: 'INVALID_VALUE',
        ...(detail ? { details: detail } : {}),
      });
    if (code === '23503')
      throw new DomainError('validation', 'A referenced document does not exist', {
        code: 'INVALID_REFERENCE',
      });
    throw error;
  }
}

// Domain errors carry a machine-readable code; adapters map them to transport status codes.

export type DomainErrorKind =
  | 'validation'
  | 'not_found'
  | 'unauthorized'
  | 'forbidden'
  | 'conflict'
  | 'gone'
  | 'quota_exceeded'
  | 'rate_limited'
  | 'unavailable';

export class DomainError extends Error {
  readonly kind: DomainErrorKind;
  readonly code: string | undefined;
  readonly details: string | undefined;

  constructor(kind: DomainErrorKind, message: string, options: { code?: string; details?: string } = {}) {
    super(message);
    this.name = 'DomainError';
    this.kind = kind;
    this.code = options.code;
    this.details = options.details;
  }
}

export class ValidationError extends DomainError {
  readonly field: string | undefined;

  constructor(message: string, options: { field?: string; code?: string; details?: string } = {}) {
    super('validation', message, options);
    this.name = 'ValidationError';
    this.field = options.field;
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string, options: { code?: string } = {}) {
    super('not_found', message, options);
    this.name = 'NotFoundError';
  }
}

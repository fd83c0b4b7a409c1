// Errors that map to an HTTP answer with the spec's body { error, message?, details?, code? }.

export class RunnerError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly details: string | undefined;

  constructor(statusCode: number, code: string, message: string, details?: string) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
    this.details = details;
  }
}

export const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const badRequest = (code: string, message: string) => new RunnerError(400, code, message);

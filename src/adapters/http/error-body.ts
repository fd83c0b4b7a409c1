import { type TRef, Type } from 'typebox';

/** The spec's error body, used by every route for every error status. */
export const ErrorBody = Type.Object(
  {
    error: Type.String(),
    message: Type.Optional(Type.String()),
    details: Type.Optional(Type.String()),
    code: Type.Optional(Type.String()),
  },
  { $id: 'ErrorBody', additionalProperties: true },
);

export type ErrorBodyShape = { error: string; message?: string; details?: string; code?: string };

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? (status >= 500 ? 'Internal Server Error' : 'Bad Request');
}

/** Standard error responses to spread into a route's `response` schema. */
export function errorResponses(...statuses: number[]): Record<number, TRef<'ErrorBody'>> {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref('ErrorBody')]));
}

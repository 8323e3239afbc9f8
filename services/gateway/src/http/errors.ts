import type { ErrorCode } from '@memex/contracts';
import { MemexError } from '@memex/contracts';

export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_params: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  internal: 500,
  unavailable: 503,
  timeout: 504,
};

export function toErrorBody(error: unknown): { status: number; body: { error: { code: ErrorCode; message: string } } } {
  if (error instanceof MemexError) return { status: HTTP_STATUS[error.code], body: { error: error.toJSON() } };
  const message = error instanceof Error ? error.message : String(error);
  console.error('gateway:', error);
  return { status: 500, body: { error: { code: 'internal', message: `internal error: ${message}` } } };
}

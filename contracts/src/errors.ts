/** Error codes every API surface (HTTP, gRPC, NATS RPC) answers with. */
export const ErrorCodes = [
  'invalid_params',
  'unauthorized',
  'forbidden',
  'not_found',
  'conflict',
  'timeout',
  'unavailable',
  'too_large',
  'internal',
] as const;
export type ErrorCode = (typeof ErrorCodes)[number];

/** An error meant for the caller: its message names what is wrong. */
export class MemexError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'MemexError';
  }

  toJSON(): { code: ErrorCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

export function isMemexError(error: unknown): error is MemexError {
  return error instanceof MemexError;
}

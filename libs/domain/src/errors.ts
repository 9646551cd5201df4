/**
 * Domain errors carry a stable `code` (part of the API contract) and a kind
 * the HTTP layer maps to a status; the domain itself knows nothing of HTTP.
 */
export type DomainErrorKind =
  | 'invalid' // 400
  | 'unauthorized' // 401
  | 'forbidden' // 403
  | 'not_found' // 404
  | 'conflict' // 409
  | 'too_large' // 413
  | 'unprocessable' // 422
  | 'rate_limited' // 429: details.retryAfter (seconds) says when to try again
  | 'unavailable'; // 503: details.retryAfter (seconds) likewise

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** The same error reported with another kind (e.g. a validation failure that is a 422 here). */
  withKind(kind: DomainErrorKind): DomainError {
    return new DomainError(kind, this.code, this.message, this.details);
  }
}

export const invalid = (code: string, message: string, details?: Record<string, unknown>) =>
  new DomainError('invalid', code, message, details);

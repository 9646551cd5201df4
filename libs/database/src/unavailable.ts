/**
 * PostgreSQL could not be reached, or the connection was lost mid-work
 * (restart, crash, pg_terminate_backend, idle_in_transaction_session_timeout,
 * a cut network). The work did not complete as far as this process knows;
 * the HTTP layer answers 503 `database_unavailable` with Retry-After.
 */
export class DatabaseUnavailableError extends Error {
  constructor(override readonly cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * SQLSTATEs that mean the session is gone or cannot start: class 08
 * (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown,
 * 57P03 cannot_connect_now (starting up, shutting down, recovering),
 * 57P05 idle_session_timeout, 25P03 idle_in_transaction_session_timeout,
 * 53300 too_many_connections.
 */
const LOST_STATES = /^(08...|57P0[1235]|25P03|53300)$/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// node-postgres reports these without a code.
const CLIENT_MESSAGES = [
  'Connection terminated',
  'connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
];

/** True when `error` means PostgreSQL is unreachable or the connection died, not that the SQL was refused. */
export function isConnectionLoss(error: unknown): boolean {
  if (error instanceof DatabaseUnavailableError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (LOST_STATES.test(code) || SOCKET_CODES.has(code))) return true;
  if (error instanceof AggregateError) return error.errors.some(isConnectionLoss);
  return typeof message === 'string' && CLIENT_MESSAGES.some((m) => message.includes(m));
}

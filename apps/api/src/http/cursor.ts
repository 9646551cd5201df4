import { invalid } from '@app/domain';

/** An opaque page cursor: the last row's sort keys as a JSON array, base64url. */
export function encodeCursor(keys: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(keys)).toString('base64url');
}

/**
 * A cursor back to its keys; `read` checks their types and builds them, or
 * gives undefined. Anything else is 400 invalid_cursor.
 */
export function decodeCursor<T>(cursor: string, read: (keys: unknown[]) => T | undefined): T {
  let keys: unknown;
  try {
    keys = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    keys = undefined;
  }
  const decoded = Array.isArray(keys) ? read(keys) : undefined;
  if (decoded === undefined) throw invalidCursor();
  return decoded;
}

export const invalidCursor = () => invalid('invalid_cursor', 'cursor is not a cursor this API returned');

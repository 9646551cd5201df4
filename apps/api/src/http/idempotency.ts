import { Tx } from '@app/database';
import { canonicalHash, DomainError, invalid } from '@app/domain';
import { claimIdempotencyKey, storeIdempotentResponse, StoredResponse } from '@app/event-store';

// An RFC 8941 sf-string's visible ASCII, at most 255 characters (Stripe's limit).
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;

/** Validates the Idempotency-Key header; absent is fine, malformed is a 400. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || !KEY_FORMAT.test(header)) {
    throw invalid('invalid_idempotency_key', 'Idempotency-Key must be one value of 1-255 visible ASCII characters');
  }
  return header;
}

/** Over the body's RFC 8785 canonical form (canonicalHash): a retry with its keys in another order is the same request. */
export const requestFingerprint = (method: string, route: string, body: unknown): Buffer => canonicalHash(`${method} ${route}`, body);

/**
 * Runs `work` at most once per (tenant, key) inside the caller's transaction
 * (Brandur's "map requests to transactions"): the key row commits with the
 * work and its response. A failed request rolls back and stores nothing, so
 * a corrected retry with the same key runs.
 */
export async function runIdempotent(
  tx: Tx,
  key: string | undefined,
  /** Hashing a large body costs CPU; only a request with a key pays it. */
  fingerprintOf: () => Buffer,
  ttlHours: number,
  work: () => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  if (key === undefined) return { ...(await work()), replayed: false };
  const fingerprint = fingerprintOf();
  const claim = await claimIdempotencyKey(tx, key, fingerprint, ttlHours);
  if (!claim.claimed) {
    if (!claim.requestHash.equals(fingerprint)) {
      throw new DomainError('unprocessable', 'idempotency_key_reused', 'This Idempotency-Key was used with a different request');
    }
    return { ...claim.response, replayed: true };
  }
  const response = await work();
  await storeIdempotentResponse(tx, key, response);
  return { ...response, replayed: false };
}

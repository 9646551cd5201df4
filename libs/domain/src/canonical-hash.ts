import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import type { NewEvent } from './events';

/**
 * "The same body", one way for the whole service: SHA-256 over a label and
 * the value's RFC 8785 canonical JSON, so the same JSON hashes the same
 * whatever its key order or number spelling. An Idempotency-Key's request
 * fingerprint and an event's payload hash are both this.
 */
export function canonicalHash(label: string, value: unknown): Buffer {
  return createHash('sha256').update(`${label}\n${canonicalize(value ?? null)}`).digest();
}

/** What tells a replayed event id with the same body from one reused with another body. */
export const payloadHash = (event: Pick<NewEvent, 'type' | 'data'>): Buffer => canonicalHash(event.type, event.data);

/**
 * The payload hash of events stored before it was canonical: SHA-256 of
 * `JSON.stringify([type, data])`. A retry of such an event is still its
 * replay (sameBody), not a reused id; stored hashes are not rewritten.
 */
const legacyPayloadHash = (event: Pick<NewEvent, 'type' | 'data'>): Buffer =>
  createHash('sha256').update(JSON.stringify([event.type, event.data])).digest();

/** Whether a stored payload hash is the body of `event`, in either form. */
export function samePayload(stored: Buffer, event: Pick<NewEvent, 'type' | 'data'>, hash = payloadHash(event)): boolean {
  return stored.equals(hash) || stored.equals(legacyPayloadHash(event));
}

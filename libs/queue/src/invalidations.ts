import type { RedisClient } from './redis-connection';

/** What every API replica drops from its caches, and which of its live event streams look again at their access. */
export type Invalidation =
  /** A revoked key. */
  | { kind: 'api-key'; keyId: string }
  /** A tenant suspended, reinstated or deleted: its keys. */
  | { kind: 'tenant-keys'; tenantId: string }
  /** A tenant's limits or quotas changed through the admin API. */
  | { kind: 'tenant-policy'; tenantId: string }
  /** Sessions deleted or archived (by request or by retention). */
  | { kind: 'sessions'; tenantId: string; sessionIds: string[] }
  /** Messages may have been missed (the subscription was down): everything. */
  | { kind: 'all' };

const KINDS = new Set<Invalidation['kind']>(['api-key', 'tenant-keys', 'tenant-policy', 'sessions', 'all']);

/** One channel for every replica: classic pub/sub, which a Redis Cluster relays to every node. */
export const invalidationsChannel = (namespace: string) => `${namespace}:cache-invalidation`;

export function parseInvalidation(text: string): Invalidation | null {
  try {
    const message = JSON.parse(text) as Invalidation;
    return KINDS.has(message?.kind) ? message : null;
  } catch {
    return null;
  }
}

/** Tells every API replica; never throws (best effort, see CacheInvalidation in the API). */
export function publishInvalidation(redis: RedisClient, namespace: string, message: Invalidation): void {
  redis.publish(invalidationsChannel(namespace), JSON.stringify(message)).catch(() => undefined);
}

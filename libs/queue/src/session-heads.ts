import type { RedisClient } from './redis-connection';

/** A session's log grew: what the API's live event streams wake on (the events themselves are read from PostgreSQL). */
export interface SessionHead {
  tenantId: string;
  sessionId: string;
  headSeq: number;
}

/** One channel for every session: classic pub/sub, which a Redis Cluster relays to every node. */
export const sessionHeadsChannel = (namespace: string) => `${namespace}:session-heads`;

/**
 * Publishes a committed head; never throws. Best effort: a stream that
 * misses it finds the events on its next safety-net poll (SSE_HEARTBEAT_MS).
 */
export function publishSessionHead(redis: RedisClient, namespace: string, head: SessionHead): void {
  redis.publish(sessionHeadsChannel(namespace), JSON.stringify(head)).catch(() => undefined);
}

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
 * What the search indexer hears: a session's heads, thinned by
 * SearchNoticeThrottle. Not the heads channel itself: a worker woken by
 * every append spent more CPU on the wake-ups than on indexing.
 */
export const searchNoticesChannel = (namespace: string) => `${namespace}:search-notices`;

/**
 * Publishes a committed head; never throws. Best effort: a stream that
 * misses it finds the events on its next safety-net poll (SSE_HEARTBEAT_MS),
 * the search index on its next sweep. `notifySearch`: the head goes to the
 * search indexer too.
 */
export function publishSessionHead(redis: RedisClient, namespace: string, head: SessionHead, notifySearch = true): void {
  const text = JSON.stringify(head);
  redis.publish(sessionHeadsChannel(namespace), text).catch(() => undefined);
  if (notifySearch) redis.publish(searchNoticesChannel(namespace), text).catch(() => undefined);
}

/**
 * Which heads the search indexer needs: a session's first, then none for
 * `windowMs` (SEARCH_INDEX_DELAY_MS). The index run a notice starts begins
 * at least `windowMs` after it and reads the head then, so the heads held
 * back meanwhile are covered by it. Forgetting a session (the oldest go
 * first beyond `remembered`) only sends one notice more.
 */
export class SearchNoticeThrottle {
  private readonly quietUntil = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly remembered = 50_000,
  ) {}

  due(head: Pick<SessionHead, 'tenantId' | 'sessionId'>): boolean {
    const key = `${head.tenantId}/${head.sessionId}`;
    const now = this.now();
    if ((this.quietUntil.get(key) ?? -Infinity) > now) return false;
    this.quietUntil.delete(key);
    this.quietUntil.set(key, now + this.windowMs);
    if (this.quietUntil.size > this.remembered) this.quietUntil.delete(this.quietUntil.keys().next().value!);
    return true;
  }
}

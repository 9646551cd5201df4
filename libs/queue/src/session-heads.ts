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
 * QuietWindows (one per SEARCH_INDEX_DELAY_MS). Not the heads channel itself: a worker woken by
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

/** A head as a message carries it; null for anything else. */
export function parseSessionHead(text: string): SessionHead | null {
  try {
    const head = JSON.parse(text) as SessionHead;
    return typeof head?.tenantId === 'string' && typeof head.sessionId === 'string' && Number.isInteger(head.headSeq) ? head : null;
  } catch {
    return null;
  }
}

/**
 * Per session, whether a head calls for action: its first does, then none
 * for `windowMs` unless the session is forgotten first. The API sends a
 * search notice only on such heads (window SEARCH_INDEX_DELAY_MS: the index
 * run a notice starts begins at least that long after it and reads the head
 * then, so the heads held back meanwhile are covered); the worker enqueues
 * an index run only on such notices, and forgets the session when its run
 * starts. Forgetting a session (the oldest go first beyond `remembered`)
 * only lets one head more through.
 */
export class QuietWindows {
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

  forget(head: Pick<SessionHead, 'tenantId' | 'sessionId'>): void {
    this.quietUntil.delete(`${head.tenantId}/${head.sessionId}`);
  }
}

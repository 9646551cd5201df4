/**
 * A per-process memo keyed by session, the least recently set entry evicted
 * beyond `capacity`: hints that spare a query, never the source of truth.
 */
export class RecentSessions<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  get(tenantId: string, sessionId: string): V | undefined {
    return this.entries.get(keyOf(tenantId, sessionId));
  }

  set(tenantId: string, sessionId: string, value: V): void {
    const key = keyOf(tenantId, sessionId);
    // Re-inserted, so Map order is the order of last use and the first key is the one to evict.
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}

const keyOf = (tenantId: string, sessionId: string) => `${tenantId}\u0000${sessionId}`;
